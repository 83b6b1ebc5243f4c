"""Small tasks built in a temporary repository, for the harness tests (imported, unlike conftest).

The task adds two float32 vectors. Its baseline is a Triton kernel (run by the interpreter on
CPU), its reference is PyTorch; candidates are given as source text for kernel.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from arena.task.task import Case, Category, Entry, Task, TensorSpec
from arena.task.tolerance import merge_tolerances

TRITON_ADD = """
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    z = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)
    return z
"""

# The same sum, autotuned over 12 configs (host-side launch cost, a config chosen per size).
AUTOTUNED_ADD = """
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256, 512) for w in (1, 2, 4)],
    key=["n"],
)
@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    z = torch.empty_like(x)
    n = x.numel()
    _add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, z, n)
    return z
"""

REFERENCE = """
import torch


def add(x, y):
    return torch.add(x, y)
"""

HIP_ADD = """
__global__ void add_kernel(const float* x, const float* y, float* z, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}

extern "C" int add(const float* x, const float* y, float* z, long n, hipStream_t stream) {
    hipLaunchKernelGGL(add_kernel, dim3((n + 255) / 256), dim3(256), 0, stream, x, y, z, n);
    return (int)hipGetLastError();
}
"""


def build_task(root: Path, *, baseline: str = TRITON_ADD, hip: bool = False, n: int = 3000) -> Task:
    """Write the add task under `root` (the repository root) and return its record."""
    task_dir = root / "tasks" / "t" / "add"
    task_dir.mkdir(parents=True, exist_ok=True)
    entry_file = "kernel.hip" if hip else "kernel.py"
    (task_dir / entry_file).write_text(textwrap.dedent(HIP_ADD if hip else baseline))
    (task_dir / "reference.py").write_text(REFERENCE)
    return Task(
        address="tasks/t/add:add",
        name="add",
        category=Category.HIP2HIP if hip else Category.TRITON2TRITON,
        task_dir="tasks/t/add",
        description="z = x + y",
        baseline=(entry_file,),
        editable=(entry_file,),
        entry=Entry(entry_file, "add"),
        signature="add(x: [N] f32, y: [N] f32) -> [N] f32",
        reference=Entry("reference.py", "add"),
        inputs=(TensorSpec("x", ("N",)), TensorSpec("y", ("N",))),
        outputs=(TensorSpec("z", ("N",)),),
        scalars={},
        abi=("x", "y", "z", "N") if hip else (),
        cases=(Case("small", {"N": 129}, "float32", 1), Case("main", {"N": n}, "float32", 2, timed=True)),
        tolerances=merge_tolerances({}),
        forbidden=("torch.add",),
        flops="N",
        bytes="3*N*esize",
        exemplars=(),
        wrong="",
        sources=("reference.py",),
        build="",
        bench="",
    )
