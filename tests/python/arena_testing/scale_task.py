"""A Triton kernel that doubles a vector (y = 2 * x), and a wrong one that triples it, and the
one-task repository they belong to: the runner's and executors' end-to-end tests (Triton's
interpreter on CPU)."""

from __future__ import annotations

from pathlib import Path

SCALE_ADDRESS = "tasks/triton2triton/scale:scale"

SCALE_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * FACTOR, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), FACTOR=2.0, BLOCK=256)
    return y
"""
WRONG_KERNEL = SCALE_KERNEL.replace("FACTOR=2.0", "FACTOR=3.0")
SCALE_BUILD = """
kernel_task(
    name="scale",
    category="triton2triton",
    description="y = 2 * x",
    baseline=["kernel.py"],
    entry="kernel.py:scale",
    signature="scale(x: [N] float32) -> [N] float32",
    reference="reference.py:scale",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["N"], "dtype": "float32"}],
    outputs=[{"name": "y", "shape": ["N"], "dtype": "float32"}],
    cases=[
        {"name": "small", "dims": {"N": 300}, "dtype": "float32", "seed": 5},
        {"name": "big", "dims": {"N": 1000000}, "dtype": "float32", "seed": 6, "timed": True},
    ],%s
)
"""


def write_scale_repo(root: Path, iterations: int | None = None) -> Path:
    """`root` as a repository holding the scale task (`iterations`: its attempt budget, else the default)."""
    task_dir = root / "tasks" / "triton2triton" / "scale"
    task_dir.mkdir(parents=True)
    (root / "pants.toml").write_text("")
    budget = "" if iterations is None else f"\n    iterations={iterations},"
    (task_dir / "BUILD").write_text(SCALE_BUILD % budget)
    (task_dir / "kernel.py").write_text(SCALE_KERNEL)
    (task_dir / "reference.py").write_text("def scale(x):\n    return x * 2\n")
    return root
