"""A draw mapped after it is made (arena/task/mapped.py): `then`, elementwise maps in order (AKA's
`torch.randn(...).sigmoid().log()`), and `normalize`, the values divided by their sums along an
axis (`p = torch.rand(...); p = p / p.sum(-1, keepdim=True)`), on a normal, uniform or
half_normal draw. The loader refuses a map outside the domain the draw's range gives it, and the
codec keeps both."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest

WriteTask = Callable[..., Path]


def _inputs(dist: dict[str, Any], dtype: str = "$dtype") -> list[dict[str, Any]]:
    return [{"name": "x", "shape": ["M", "N"], "dtype": dtype, "dist": dist}]


@pytest.mark.parametrize(
    "dist",
    [
        {"kind": "normal", "then": ["sigmoid", "log"]},
        {"kind": "uniform", "then": ["sigmoid"]},
        {"kind": "uniform", "normalize": -1},
        {"kind": "half_normal", "std": 0.5, "normalize": 0},
        {"kind": "normal", "std": 2.0, "then": ["exp"], "normalize": 1},
        {"kind": "uniform", "low": 0.5, "high": 2.0, "then": ["log", "exp", "log"]},
    ],
)
def test_a_mapped_draw_loads_and_round_trips(
    triton_task: WriteTask, dist_round_trips: Callable[[dict[str, Any]], None], dist: dict[str, Any]
) -> None:
    triton_task(inputs=_inputs(dist))
    dist_round_trips(dist)


BAD = [
    ("log-normal", {"kind": "normal", "then": ["log"]}, "float32", "takes the log of values down to -inf"),
    ("log-uniform-0", {"kind": "uniform", "then": ["log"]}, "float32", "then[0] takes the log of values down to 0"),
    ("log-log", {"kind": "normal", "then": ["sigmoid", "log", "log"]}, "float32", "then[2] takes the log"),
    ("unknown-map", {"kind": "normal", "then": ["tanh"]}, "float32", "then[0] is 'tanh'; expected one of"),
    ("empty", {"kind": "normal", "then": []}, "float32", "then must be a non-empty list"),
    ("string", {"kind": "normal", "then": "sigmoid"}, "float32", "then must be a non-empty list"),
    ("negative-sum", {"kind": "normal", "normalize": -1}, "float32", "normalizes values down to -inf"),
    ("below-0", {"kind": "uniform", "low": -1, "normalize": -1}, "float32", "normalizes values down to -1"),
    ("log-sum", {"kind": "normal", "then": ["sigmoid", "log"], "normalize": 0}, "float32", "normalizes values"),
    ("float-axis", {"kind": "uniform", "normalize": 1.5}, "float32", "normalize (an axis) must be an integer"),
    ("randint", {"kind": "randint", "low": 0, "high": 9, "then": ["exp"]}, "int32", "unknown key(s) 'then'"),
    ("constant", {"kind": "constant", "value": 1, "normalize": 0}, "float32", "unknown key(s) 'normalize'"),
    ("cumsum", {"kind": "cumsum", "base": "uniform", "dim": 0, "normalize": 0}, "float32", "a cumsum takes no then"),
    (
        "masked",
        {"kind": "normal", "then": ["exp"], "masked": 0.1, "mask_value": 0},
        "float32",
        "a masked write and then or normalize do not go together",
    ),
    ("int-tensor", {"kind": "uniform", "normalize": -1}, "int32", "'x' is int32; then and normalize map float"),
    ("no-axis", {"kind": "uniform", "normalize": 2}, "float32", "normalized along dim 2, which its 2-dim shape"),
]


@pytest.mark.parametrize("dist, dtype, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_mapped_draw_is_refused(
    triton_task: WriteTask, refused_load: Callable[[], str], dist: dict[str, Any], dtype: str, message: str
) -> None:
    triton_task(inputs=_inputs(dist, dtype))
    assert message in refused_load()


def test_a_cases_normalize_is_checked_against_that_case(
    triton_task: WriteTask, triton_fields: dict[str, Any], refused_load: Callable[[], str]
) -> None:
    cases = copy.deepcopy(triton_fields["cases"])
    cases[1]["dists"] = {"x": {"kind": "uniform", "normalize": -3}}
    triton_task(inputs=_inputs({"kind": "uniform", "normalize": -1}), cases=cases)
    assert "case 'big': 'x' is normalized along dim -3" in refused_load()
