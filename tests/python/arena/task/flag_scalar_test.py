"""A bool scalar: a flag passed by name (AKA's `mul_routed_weight=True`), kept by the loader and
the codec; other values that are not numbers or dim names are still refused."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]


def test_a_bool_scalar_is_kept_and_round_trips(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(scalars={"apply": True, "off": False})
    (task,) = load_tasks(tmp_path)
    assert task.scalars == {"apply": True, "off": False}
    assert all(isinstance(v, bool) for v in task.scalars.values())
    back = task_from_dict(task_to_dict(task))
    assert back == task and all(isinstance(v, bool) for v in back.scalars.values())


def test_a_hip_launcher_takes_a_bool_scalar(hip_task: WriteTask, tmp_path: Path) -> None:
    # passed as int64_t 0 or 1 (arena.harness.backends.hip: int(True) == 1)
    hip_task(scalars={"flag": True}, abi=["x", "y", "M", "N", "flag"])
    (task,) = load_tasks(tmp_path)
    assert task.scalars["flag"] is True


@pytest.mark.parametrize("value", [[1, 2], (4, 8), None, {"a": 1}, "not a name"])
def test_other_values_are_refused(triton_task: WriteTask, tmp_path: Path, value: object) -> None:
    triton_task(scalars={"s": value})
    with pytest.raises(TaskDeclarationError, match="scalar 's'"):
        load_tasks(tmp_path)
