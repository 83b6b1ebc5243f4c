"""A case value: a dim a case sets to a float, named only by a scalar (a float scalar that differs
by case, AKA's `sm_scale = 1 / sqrt(head_size)`). Kept by the loader and the codec as a float;
refused where a shape, a randint bound or a HIP launcher would name it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]


def _cases(triton_fields: dict[str, Any], values: tuple[float, float], name: str = "scale") -> list[dict[str, Any]]:
    cases = copy.deepcopy(triton_fields["cases"])
    for case, value in zip(cases, values):
        case["dims"][name] = value
    return cases


def test_a_float_dim_a_scalar_names_is_kept_and_round_trips(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    triton_task(scalars={"scale": "scale"}, cases=_cases(triton_fields, (0.125, 0.08838834764831843)))
    (task,) = load_tasks(tmp_path)
    assert [case.dims["scale"] for case in task.cases] == [0.125, 0.08838834764831843]
    assert all(type(case.dims["scale"]) is float for case in task.cases)
    back = task_from_dict(task_to_dict(task))
    assert back == task and all(type(case.dims["scale"]) is float for case in back.cases)


def test_a_float_dim_a_shape_names_is_refused(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    triton_task(cases=_cases(triton_fields, (7.0, 4096.0), name="M"))
    with pytest.raises(TaskDeclarationError, match="dim 'M' is a float in some case; only a scalar may name it"):
        load_tasks(tmp_path)


def test_a_float_dim_a_randint_bound_names_is_refused(
    triton_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path
) -> None:
    inputs = [
        {"name": "x", "shape": ["M", "N"], "dtype": "int32", "dist": {"kind": "randint", "low": 0, "high": "top"}}
    ]
    triton_task(inputs=inputs, cases=_cases(triton_fields, (3.5, 9.0), name="top"))
    with pytest.raises(TaskDeclarationError, match="dim 'top' is a float in some case"):
        load_tasks(tmp_path)


def test_a_hip_task_takes_no_float_dim(hip_task: WriteTask, triton_fields: dict[str, Any], tmp_path: Path) -> None:
    hip_task(scalars={"scale": "scale"}, cases=_cases(triton_fields, (0.5, 0.25)), abi=["x", "y", "M", "N", "scale"])
    with pytest.raises(TaskDeclarationError, match="a float case value is for a Python entry's scalars"):
        load_tasks(tmp_path)
