from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from arena.task.load import load_tasks
from arena.task.task import DTYPES, Tolerance
from arena.task.tolerance import DEFAULT_TOLERANCES, merge_tolerances, tolerance_for


def test_defaults_match_task_format() -> None:
    assert DEFAULT_TOLERANCES["float32"] == Tolerance(1e-5, 1e-5)
    assert DEFAULT_TOLERANCES["float16"] == Tolerance(1e-3, 1e-3)
    assert DEFAULT_TOLERANCES["bfloat16"] == Tolerance(8e-3, 8e-3)
    assert DEFAULT_TOLERANCES["float64"] == Tolerance(1e-10, 1e-10)
    assert DEFAULT_TOLERANCES["int32"] == Tolerance(0.0, 0.0)
    assert set(DEFAULT_TOLERANCES) == set(DTYPES)


def test_merge_is_per_key() -> None:
    merged = merge_tolerances({"bfloat16": {"rtol": 0.02}, "int8": {"atol": 1}})
    assert merged["bfloat16"] == Tolerance(atol=8e-3, rtol=0.02)
    assert merged["int8"] == Tolerance(atol=1.0, rtol=0.0)
    assert merged["float32"] == DEFAULT_TOLERANCES["float32"]


def test_tolerance_for_task(triton_task: Callable[..., Path], tmp_path: Path) -> None:
    triton_task(tolerances={"float32": {"atol": 1e-4, "rtol": 1e-4}})
    (task,) = load_tasks(tmp_path)
    assert tolerance_for(task, "float32") == Tolerance(1e-4, 1e-4)
    assert tolerance_for(task, "float16") == DEFAULT_TOLERANCES["float16"]
    with pytest.raises(KeyError):
        tolerance_for(task, "float8")
