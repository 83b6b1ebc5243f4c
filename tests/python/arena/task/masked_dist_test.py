"""A masked write after the draw (AKA's `t[torch.rand(...) < p] = v`): `masked`, the share of the
elements set, and `mask_value`, the number they are set to or "nan" (the declaration's NaN: JSON
and a BUILD's literals have none), on a normal, uniform, randint or half_normal draw. The loader
refuses anything else, and the codec keeps both."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]


def _inputs(dist: dict[str, Any], dtype: str = "$dtype") -> list[dict[str, Any]]:
    return [{"name": "x", "shape": ["M", "N"], "dtype": dtype, "dist": dist}]


@pytest.mark.parametrize(
    "dist, dtype",
    [
        ({"kind": "normal", "masked": 0.05, "mask_value": "nan"}, "$dtype"),
        ({"kind": "randint", "low": 0, "high": 9, "masked": 0.1, "mask_value": -1}, "int32"),
        ({"kind": "uniform", "masked": 0.5, "mask_value": 2.5}, "float32"),
        ({"kind": "half_normal", "std": 0.1, "masked": 0.2, "mask_value": 0}, "float16"),
    ],
)
def test_a_masked_write_loads_and_round_trips(
    triton_task: WriteTask, dist_round_trips: Callable[[dict[str, Any]], None], dist: dict[str, Any], dtype: str
) -> None:
    triton_task(inputs=_inputs(dist, dtype))
    dist_round_trips(dist)


BAD = [
    ("share-alone", {"kind": "normal", "masked": 0.1}, "float32", "needs masked and mask_value together"),
    ("value-alone", {"kind": "normal", "mask_value": 1}, "float32", "needs masked and mask_value together"),
    ("share-0", {"kind": "normal", "masked": 0, "mask_value": 1}, "float32", "strictly between 0 and 1, got 0"),
    ("share-1", {"kind": "normal", "masked": 1, "mask_value": 1}, "float32", "strictly between 0 and 1, got 1"),
    ("share-str", {"kind": "normal", "masked": "p", "mask_value": 1}, "float32", "masked must be a number"),
    ("value-NaN-str", {"kind": "normal", "masked": 0.1, "mask_value": "NaN"}, "float32", 'finite number or "nan"'),
    ("value-inf-str", {"kind": "normal", "masked": 0.1, "mask_value": "inf"}, "float32", 'finite number or "nan"'),
    ("value-bool", {"kind": "normal", "masked": 0.1, "mask_value": True}, "float32", "must be a number, got True"),
    ("arange", {"kind": "arange", "masked": 0.1, "mask_value": 1}, "int32", "unknown key(s) 'mask_value', 'masked'"),
    ("constant", {"kind": "constant", "value": 0, "masked": 0.1, "mask_value": 1}, "float32", "unknown key(s)"),
    ("permutation", {"kind": "permutation", "low": 0, "high": 99, "masked": 0.1, "mask_value": 1}, "int32", "unknown"),
    (
        "cumsum",
        {"kind": "cumsum", "base": "normal", "dim": 1, "masked": 0.1, "mask_value": 1},
        "float32",
        "a cumsum is not masked",
    ),
    ("nan-int", {"kind": "randint", "low": 0, "high": 9, "masked": 0.1, "mask_value": "nan"}, "int32", "not an int32"),
    ("frac-int", {"kind": "randint", "low": 0, "high": 9, "masked": 0.1, "mask_value": 0.5}, "int64", "not an int64"),
    ("uint8-neg", {"kind": "randint", "low": 0, "high": 9, "masked": 0.1, "mask_value": -1}, "uint8", "not an uint8"),
    ("bool", {"kind": "randint", "low": 0, "high": 2, "masked": 0.1, "mask_value": 1}, "bool", "'x' is bool"),
]


@pytest.mark.parametrize("dist, dtype, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_masked_write_is_refused(
    triton_task: WriteTask, refused_load: Callable[[], str], dist: dict[str, Any], dtype: str, message: str
) -> None:
    triton_task(inputs=_inputs(dist, dtype))
    assert message in refused_load()


def test_a_nan_in_a_cases_dists_is_checked_against_that_case(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    cases = copy.deepcopy(triton_fields["cases"])
    cases[1]["dists"] = {"x": {"kind": "randint", "low": 0, "high": 9, "masked": 0.1, "mask_value": "nan"}}
    triton_task(inputs=_inputs({"kind": "normal"}, "int32"), cases=cases)
    with pytest.raises(TaskDeclarationError, match="case 'big': 'x' is int32, and its mask_value 'nan'"):
        load_tasks(tmp_path)
