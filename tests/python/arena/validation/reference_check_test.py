"""The float64 check of a task's reference (validation/reference_check.py): a reference that fixes
a narrower float type inside is run again widened, and still judged on its values."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.validation.reference_check import check_case_precision, load_reference, widened
from arena_testing.harness_tasks import build_task

# The add task's reference with a float type fixed inside, mixed in a matrix product with a tensor
# of the inputs' type (AKA's flash attention: `torch.softmax(p.float(), dim=-1).half()` then
# `torch.matmul(p, v)`): fine in the case's float32, an error on float64 inputs.
FIXED_FLOAT32 = """
import torch


def add(x, y):
    s = (x + y).float()
    eye = torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
    return (eye @ s.unsqueeze(1)).squeeze(1)
"""
# The same through float16: float16's rounding is what it computes, and widened its float64 answer
# is the exact sum, which float32's tolerance (1e-5) refuses: the check still judges the values.
THROUGH_HALF = FIXED_FLOAT32.replace("(x + y).float()", "(x + y).half().float()")


def _check(tmp_path: Path, reference: str) -> str:
    task = build_task(tmp_path)
    (tmp_path / task.task_dir / "reference.py").write_text(reference)
    return check_case_precision(task, load_reference(task, tmp_path / task.task_dir), "small")


def test_a_dtype_generic_reference_passes_as_before(tmp_path: Path) -> None:
    assert _check(tmp_path, "import torch\n\ndef add(x, y):\n    return torch.add(x, y)\n") == ""


def test_a_reference_that_fixes_float32_inside_is_run_again_widened_and_passes(tmp_path: Path) -> None:
    assert _check(tmp_path, FIXED_FLOAT32) == ""


def test_a_reference_through_float16_is_widened_and_still_judged_on_its_values(tmp_path: Path) -> None:
    error = _check(tmp_path, THROUGH_HALF)
    assert error.startswith("float32 against float64:"), error


def test_without_the_widening_such_a_reference_cannot_run_in_float64(tmp_path: Path) -> None:
    task = build_task(tmp_path)
    (tmp_path / task.task_dir / "reference.py").write_text(FIXED_FLOAT32)
    add = load_reference(task, tmp_path / task.task_dir)
    wide = torch.ones(4, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        add(wide, wide)
    with widened():
        assert add(wide, wide).dtype == torch.float64
    assert torch.get_default_dtype() == torch.float32  # put back


def test_a_reference_that_fails_widened_too_reports_its_first_error(tmp_path: Path) -> None:
    refuses = FIXED_FLOAT32.replace(
        "    return (eye",
        "    if torch.get_default_dtype() == torch.float64:\n        raise ValueError('widened')\n    return (eye",
    )
    with pytest.raises(RuntimeError, match="dtype"):  # the plain float64 run's error, not ValueError('widened')
        _check(tmp_path, refuses)


def test_widening_keeps_integer_and_float8_types() -> None:
    with widened():
        assert torch.arange(3).dtype == torch.int64
        assert torch.ones(2, dtype=torch.float16).dtype == torch.float64
        assert torch.ones(2).to(torch.float8_e4m3fn).dtype == torch.float8_e4m3fn
        assert torch.ones(2).half().dtype == torch.float64
