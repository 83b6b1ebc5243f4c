"""An entry that writes its output into an argument and also returns a tensor (AKA's
`write_zeros(output)` returns `output`): with the entry's return declared ignored, the harness
reads only the written input, on every path (checked calls, timed calls, the judge's baseline);
without it, the returned tensor is refused. On the CPU backend, in this process's judge with the
candidate in its worker (arena.harness.run)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from arena.harness.check import returned_outputs
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.task import Case, Category, Entry, Task, TensorSpec
from arena.task.tolerance import merge_tolerances
from arena_testing.harness_tasks import run_verdict

# out = 2 * x, written into `out`; the buffer is also returned, as AKA's wrappers do.
KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


def double(x, out):
    _double_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out
"""

REFERENCE = """
def double(x, out):
    out.copy_(x * 2.0)
"""


def _task(root: Path, *, ignored: bool) -> Task:
    task_dir = root / "tasks" / "t" / "double"
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "kernel.py").write_text(textwrap.dedent(KERNEL))
    (task_dir / "reference.py").write_text(textwrap.dedent(REFERENCE))
    return Task(
        address="tasks/t/double:double", name="double", category=Category.TRITON2TRITON,
        task_dir="tasks/t/double", description="out = 2 * x, written into out",
        baseline=("kernel.py",), editable=("kernel.py",),
        entry=Entry("kernel.py", "double", return_ignored=ignored),
        signature="double(x: [N] f32, out: [N] f32) -> ignored; writes out",
        reference=Entry("reference.py", "double"),
        inputs=(TensorSpec("x", ("N",)), TensorSpec("out", ("N",))),
        outputs=(TensorSpec("out", ("N",), inplace=True),),
        scalars={}, abi=(),
        cases=(Case("small", {"N": 129}, "float32", 1), Case("main", {"N": 3000}, "float32", 2, timed=True)),
        tolerances=merge_tolerances({}), forbidden=(), flops="N", bytes="2*N*esize",
        exemplars=(), wrong="", sources=("reference.py",), build="", bench="",
    )  # fmt: skip


def test_the_return_is_no_output_only_where_declared(tmp_path: Path) -> None:
    ignored, kept = _task(tmp_path, ignored=True), _task(tmp_path, ignored=False)
    assert returned_outputs(ignored, torch.zeros(3)) == () and returned_outputs(ignored, None) == ()
    assert returned_outputs(kept, None) == ()
    assert "expected 0 output tensor(s)" in str(returned_outputs(kept, torch.zeros(3)))
    assert task_from_dict(task_to_dict(ignored)) == ignored


def test_the_baseline_passes_with_its_return_ignored(tmp_path: Path, cpu: None) -> None:
    status, errors = run_verdict(tmp_path, _task(tmp_path, ignored=True), None)
    assert status == "PASSED", errors


def test_the_baseline_is_refused_without_it(tmp_path: Path, cpu: None) -> None:
    status, errors = run_verdict(tmp_path, _task(tmp_path, ignored=False), None)
    assert status != "PASSED" and any("expected 0 output tensor(s)" in e for e in errors), (status, errors)


@pytest.mark.parametrize(
    ("change", "replacement"),
    [
        ("* 2.0, mask=mask)", "* 3.0, mask=mask)"),  # the buffer written wrong
        # the right answer returned in a new tensor, the buffer left as it came: the return is no output
        (
            "    _double_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)\n    return out",
            "    fresh = torch.empty_like(out)\n"
            "    _double_kernel[(triton.cdiv(x.numel(), 256),)](x, fresh, x.numel(), BLOCK=256)\n    return fresh",
        ),
    ],
)
def test_a_wrong_write_is_incorrect(tmp_path: Path, cpu: None, change: str, replacement: str) -> None:
    source = textwrap.dedent(KERNEL).replace(change, replacement)
    assert source != textwrap.dedent(KERNEL)
    status, errors = run_verdict(tmp_path, _task(tmp_path, ignored=True), source)
    assert status == "INCORRECT" and any("output out" in e for e in errors), errors
