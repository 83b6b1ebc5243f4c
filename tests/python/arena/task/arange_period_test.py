"""An arange's period: start + step * (i mod period) over the flattened tensor, a range per row
(AKA's `offsets[b, j] = j`, `positions[start + k] = k`). The period is a positive int or names a
dim; the loader refuses anything else, and the codec keeps it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]


def _inputs(period: Any) -> list[dict[str, Any]]:
    return [{"name": "x", "shape": ["M", "N"], "dtype": "int32", "dist": {"kind": "arange", "period": period}}]


@pytest.mark.parametrize("period", ["N", 3])
def test_a_period_loads_and_round_trips(triton_task: WriteTask, tmp_path: Path, period: Any) -> None:
    triton_task(inputs=_inputs(period))
    (task,) = load_tasks(tmp_path)
    assert task.inputs[0].dist.kind == "arange" and task.inputs[0].dist.params == {"period": period}
    text = json.dumps(task_to_dict(task), sort_keys=True)
    back = task_from_dict(json.loads(text))
    assert back == task and json.dumps(task_to_dict(back), sort_keys=True) == text
    assert task_to_dict(back)["inputs"][0]["dist"] == {"kind": "arange", "period": period}


def test_a_divisor_loads_and_round_trips(triton_task: WriteTask, tmp_path: Path) -> None:
    inputs = [{"name": "x", "shape": ["M", "N"], "dtype": "int32", "dist": {"kind": "arange", "divisor": "N"}}]
    inputs.append({"name": "p", "shape": ["M", "N"], "dist": {"kind": "arange", "period": 6, "divisor": 2}})
    triton_task(inputs=inputs)
    (task,) = load_tasks(tmp_path)
    assert [s.dist.params for s in task.inputs] == [{"divisor": "N"}, {"period": 6, "divisor": 2}]
    assert task_from_dict(json.loads(json.dumps(task_to_dict(task)))) == task


BAD_PERIODS = [
    ("zero", 0, "dist period must be >= 1, got 0"),
    ("negative", -2, "dist period must be >= 1, got -2"),
    ("float", 2.5, "dist period must be an integer, got 2.5"),
    ("bool", True, "dist period must be an integer, got True"),
    ("not-an-identifier", "2N", "period (a dim name)"),
    ("unset-dim", "P", "case 'small' uses dim 'P' not set in its dims (by 'x')"),
]


@pytest.mark.parametrize(
    "divisor, message",
    [(0, "dist divisor must be >= 1, got 0"), (1.5, "dist divisor must be an integer"), ("D", "uses dim 'D' not set")],
)
def test_a_bad_divisor_is_refused(triton_task: WriteTask, tmp_path: Path, divisor: Any, message: str) -> None:
    triton_task(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "arange", "divisor": divisor}}])
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    assert message in str(raised.value)


def test_a_divisor_dim_below_one_in_a_case_is_refused(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    triton_task(
        inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "arange", "divisor": "P"}}],
        cases=_cases(triton_fields, (0, 4)),
    )
    with pytest.raises(TaskDeclarationError, match="case 'small': 'x' is an arange of divisor P = 0, not >= 1"):
        load_tasks(tmp_path)


@pytest.mark.parametrize("period, message", [b[1:] for b in BAD_PERIODS], ids=[b[0] for b in BAD_PERIODS])
def test_a_bad_period_is_refused(triton_task: WriteTask, tmp_path: Path, period: Any, message: str) -> None:
    triton_task(inputs=_inputs(period))
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    assert message in str(raised.value)


def _cases(triton_fields: dict[str, Any], values: tuple[Any, Any]) -> list[dict[str, Any]]:
    cases = copy.deepcopy(triton_fields["cases"])
    for case, value in zip(cases, values):
        case["dims"]["P"] = value
    return cases


def test_a_period_dim_below_one_in_a_case_is_refused(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    triton_task(inputs=_inputs("P"), cases=_cases(triton_fields, (0, 4)))
    with pytest.raises(TaskDeclarationError, match="case 'small': 'x' is an arange of period P = 0, not >= 1"):
        load_tasks(tmp_path)


def test_a_period_that_names_a_float_dim_is_refused(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    triton_task(inputs=_inputs("P"), cases=_cases(triton_fields, (0.5, 2.0)))
    with pytest.raises(TaskDeclarationError, match="dim 'P' is a float in some case; only a scalar may name it"):
        load_tasks(tmp_path)


def test_a_period_in_a_cases_dists_is_checked_too(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    cases = _cases(triton_fields, (4, 4))
    cases[1]["dists"] = {"x": {"kind": "arange", "period": "Q"}}
    triton_task(inputs=_inputs("P"), cases=cases)
    with pytest.raises(TaskDeclarationError, match="case 'big' uses dim 'Q' not set in its dims"):
        load_tasks(tmp_path)
