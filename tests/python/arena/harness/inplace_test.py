"""Outputs written in place into an input (a paged-cache write): the harness hands the entry a
fresh copy of the input each call, reads the output there, compares it like any other, and still
refuses a call that writes an input not declared written. On the CPU backend, in this process's
judge with the candidate in its worker (arena.harness.run)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.harness.check import called_outputs, made_outputs, split_outputs, with_written, written_inputs
from arena.task.codec import task_from_dict, task_to_dict
from arena_testing.harness_tasks import SCATTER_REFERENCE, TRITON_SCATTER, build_scatter_task, run_verdict


def _verdict(root: Path, source: str | None) -> tuple[str, list[str]]:
    return run_verdict(root, build_scatter_task(root), source)


def test_the_outputs_in_declared_order_take_the_written_input_in_its_place(tmp_path: Path) -> None:
    task = build_scatter_task(tmp_path)
    assert written_inputs(task) == {1: 0} and made_outputs(task) == [0]
    cache, rows, slots, total = (torch.zeros(1), torch.ones(1), torch.tensor([0]), torch.full((1,), 2.0))
    assert with_written(task, (total,), (cache, rows, slots)) == (total, cache)
    assert split_outputs(None, 0) == () and isinstance(split_outputs(torch.zeros(1), 0), str)
    assert task_from_dict(task_to_dict(task)) == task
    assert "inplace" not in task_to_dict(task)["outputs"][0] and task_to_dict(task)["outputs"][1]["inplace"]


def test_a_reference_that_writes_its_input_is_read_there_on_a_copy(tmp_path: Path) -> None:
    task = build_scatter_task(tmp_path)
    namespace: dict = {}
    exec(SCATTER_REFERENCE, namespace)
    cache, rows, slots = torch.zeros(5, 2), torch.arange(4.0).reshape(2, 2), torch.tensor([3, 1])
    got = called_outputs(task, namespace["scatter"], [cache, rows, slots], {})
    assert not isinstance(got, str), got
    total, written = (t for t in got if isinstance(t, torch.Tensor))
    assert torch.equal(written[3], rows[0]) and torch.equal(written[1], rows[1]) and written[0].sum() == 0
    assert torch.equal(total, torch.tensor([1.0, 5.0])) and cache.sum() == 0  # the caller's input untouched


def test_the_baseline_that_writes_the_cache_passes(tmp_path: Path, cpu: None) -> None:
    status, errors = _verdict(tmp_path, None)
    assert status == "PASSED", errors


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # The cache written one slot off: the in-place output is compared, not only the sum.
        ("tl.store(cache_ptr + slot * D", "output cache"),
        # The cache left as it came: nothing written where the reference wrote.
        ("tl.store(cache_ptr + slot * D + cols, row, mask=cols < D)", "output cache"),
        # An input not declared written, written: still refused.
        ("tl.store(total_ptr + t", "input rows was modified"),
        # The cache returned as well: a written output is not returned.
        ("return total", "expected 1 output tensor(s)"),
    ],
)
def test_what_a_candidate_gets_wrong_about_the_written_cache_is_caught(
    tmp_path: Path, cpu: None, change: str, message: str
) -> None:
    replacement = {
        "tl.store(cache_ptr + slot * D": "tl.store(cache_ptr + ((slot + 1) % (tl.num_programs(0) * 0 + 50)) * D",
        "tl.store(cache_ptr + slot * D + cols, row, mask=cols < D)": "pass",
        "tl.store(total_ptr + t": "tl.store(rows_ptr + t * D, 0.0)\n    tl.store(total_ptr + t",
        "return total": "return total, cache",
    }[change]
    source = TRITON_SCATTER.replace(change, replacement)
    assert source != TRITON_SCATTER
    status, errors = _verdict(tmp_path, source)
    assert status == "INCORRECT" and any(message in e for e in errors), errors
