"""A bool scalar reaches a Python entry by name as a bool (AKA's `mul_routed_weight=True`), on
every call path: on the CPU backend, in this process's judge with the candidate in its worker
(arena.harness.run)."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from arena.task.task import Task
from arena_testing.harness_tasks import build_task, run_verdict

# z = -(x + y) under the flag, else x + y; the entry and the reference refuse anything but a bool.
KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, NEGATE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    z = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)
    if NEGATE:
        z = -z
    tl.store(z_ptr + offsets, z, mask=mask)


def add(x, y, *, negate):
    assert type(negate) is bool, type(negate)
    z = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, z, x.numel(), NEGATE=negate, BLOCK=256)
    return z
"""

REFERENCE = """
def add(x, y, *, negate):
    assert type(negate) is bool, type(negate)
    return -(x + y) if negate else x + y
"""


def _task(root: Path, negate: bool) -> Task:
    task = build_task(root, baseline=KERNEL)
    (root / task.task_dir / "reference.py").write_text(textwrap.dedent(REFERENCE))
    return dataclasses.replace(task, scalars={"negate": negate})


@pytest.mark.parametrize("negate", [True, False])
def test_the_baseline_gets_the_flag(tmp_path: Path, cpu: None, negate: bool) -> None:
    status, errors = run_verdict(tmp_path, _task(tmp_path, negate), None)
    assert status == "PASSED", errors


def test_a_candidate_that_ignores_the_flag_is_incorrect(tmp_path: Path, cpu: None) -> None:
    source = textwrap.dedent(KERNEL).replace("    if NEGATE:\n        z = -z\n", "")
    status, errors = run_verdict(tmp_path, _task(tmp_path, True), source)
    assert status == "INCORRECT" and any("output z" in e for e in errors), errors
