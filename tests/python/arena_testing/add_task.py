"""A tiny triton2triton task (vector add) written into a temporary repository, small enough for
the interpreter. Shared by the evaluation and command-line tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ADD_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x {op} y, mask=mask)


def add(x, y):
    z = torch.empty_like(x)
    n = x.numel()
    _add[(triton.cdiv(n, {block}),)](x, y, z, n, BLOCK={block})
    return z
"""
ADD_FIELDS: dict[str, Any] = dict(
    name="add",
    category="triton2triton",
    description="Elementwise sum of two vectors.",
    baseline=["kernel.py"],
    entry="kernel.py:add",
    signature="add(x: [N] $dtype, y: [N] $dtype) -> [N] $dtype",
    reference="reference.py:add",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["N"]}, {"name": "y", "shape": ["N"]}],
    outputs=[{"name": "z", "shape": ["N"]}],
    cases=[
        {"name": "small", "dims": {"N": 1000}, "dtype": "float32", "seed": 1},
        {"name": "big", "dims": {"N": 1 << 18}, "dtype": "float32", "seed": 2, "timed": True},
    ],
    flops="N",
    bytes="3*N*esize",
    exemplars=["exemplars/wide"],
    wrong="wrong",
)
ADD_FILES = {
    "kernel.py": ADD_KERNEL.format(op="+", block=128),
    "reference.py": "def add(x, y):\n    return x + y\n",
    "exemplars/wide/kernel.py": ADD_KERNEL.format(op="+", block=1024),
    "wrong/kernel.py": ADD_KERNEL.format(op="-", block=128),
}


def write_add_task(root: Path, files: dict[str, str] | None = None, **overrides: Any) -> Path:
    """root/tasks/triton2triton/add with its BUILD; returns the repository root."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pants.toml").write_text("[GLOBAL]\n")
    task_dir = root / "tasks" / "triton2triton" / "add"
    task_dir.mkdir(parents=True, exist_ok=True)
    fields = {**ADD_FIELDS, **overrides}
    (task_dir / "BUILD").write_text("kernel_task(\n" + "".join(f"    {k}={v!r},\n" for k, v in fields.items()) + ")\n")
    for name, text in (ADD_FILES if files is None else files).items():
        (task_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / name).write_text(text)
    return root
