"""A Python entry whose abi orders its call (AKA's `f(x, n, y)`: a tensor after a number) gets its
inputs and scalars by position in that order, on every call path (the baseline, the candidate, the
judge's timing); the reference is still called `reference(*inputs, **scalars)`. On the CPU backend,
in this process's judge with the candidate in its worker (arena.harness.run)."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from arena.harness.verdict import Verdict
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.task import Task, positional_order
from arena_testing.harness_tasks import build_task, run_verdict

# z = x + y, with the element count between the two tensors; `scale` comes by name.
KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    z = (tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)) * scale
    tl.store(z_ptr + offsets, z, mask=mask)


def add(x, n, y, scale=1.0):
    assert isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and n == x.numel(), (type(x), n)
    z = torch.empty_like(x)
    _add_kernel[(triton.cdiv(n, 256),)](x, y, z, n, scale, BLOCK=256)
    return z
"""

REFERENCE = """
def add(x, y, *, n, scale):
    assert n == x.numel()
    return (x + y) * scale
"""


def _task(root: Path) -> Task:
    task = build_task(root, baseline=KERNEL)
    (root / task.task_dir / "reference.py").write_text(textwrap.dedent(REFERENCE))
    abi = ("x", "n", "y")
    entry = dataclasses.replace(task.entry, positional=positional_order(abi, task.inputs))
    return dataclasses.replace(task, scalars={"n": "N", "scale": 2.0}, abi=abi, entry=entry)


def test_the_baseline_is_called_in_the_abi_order(tmp_path: Path, cpu: None) -> None:
    task = _task(tmp_path)
    assert task.entry.positional == (0, "n", 1) and task_from_dict(task_to_dict(task)) == task
    status, errors = run_verdict(tmp_path, task, None)
    assert status == "PASSED", errors


def test_a_candidate_that_reads_another_order_fails(tmp_path: Path, cpu: None) -> None:
    # given (x, N, y) as (x, y, n), its own check sees the tensor y where it wants the count
    source = textwrap.dedent(KERNEL).replace("def add(x, n, y, scale=1.0):", "def add(x, y, n, scale=1.0):")
    try:
        run_verdict(tmp_path, _task(tmp_path), source)
    except Verdict as verdict:
        assert verdict.status == "RUNTIME_ERROR" and "first call: AssertionError" in str(verdict)
    else:
        pytest.fail("the candidate ran without a verdict")
