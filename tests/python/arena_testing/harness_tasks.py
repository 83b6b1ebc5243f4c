"""Small tasks built in a temporary repository, for the harness tests (imported, unlike conftest).

The task adds two float32 vectors. Its baseline is a Triton kernel (run by the interpreter on
CPU), its reference is PyTorch; candidates are given as source text for kernel.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from arena.harness.job import Job
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

# The sum with a stored answer (attack 6): the inputs fingerprinted by a few elements, each answer
# computed once and its tensor handed back whenever the same inputs come again.
STORED_ADD = TRITON_ADD.replace(
    "def add(x, y):\n    z = torch.empty_like(x)",
    "_answers = {}\n\n\ndef add(x, y):\n"
    "    key = (float(x.reshape(-1)[0]), float(y.reshape(-1)[-1]), x.numel())\n"
    "    if key in _answers:\n"
    "        return _answers[key]\n"
    "    z = _answers[key] = torch.empty_like(x)",
)

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


# A plain tiled matrix product (no autotuning): a vendor library's GEMM is faster, so a candidate
# that reaches one gets the profiled call.
TRITON_MATMUL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    _matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, BM=32, BN=32, BK=32)
    return c
"""

MATMUL_REFERENCE = """
import torch


def matmul(a, b):
    return torch.matmul(a.float(), b.float()).to(a.dtype)
"""


def harness_job(root: Path, task: Task, source: str | None = None, **settings: object) -> Job:
    """The job a parent would hand a child for `task` and `source` as its entry file (None: the
    baseline), laid out under root/run, on the CPU backend unless `settings` say otherwise."""
    from arena.candidate.candidate import Candidate, baseline_candidate
    from arena.harness.job import lay_out, make_folders, new_job
    from arena.harness.settings import HarnessSettings

    candidate = (
        baseline_candidate(task, root)
        if source is None
        else Candidate(task.address, {task.entry.file: textwrap.dedent(source).encode()})
    )
    lay_out(task, candidate, root, root / "run")
    dirs = {name: str(path) for name, path in make_folders(root / "run").items()}
    options = {"backend": "cpu", "secret_seed": 99, **settings}
    return new_job(task, HarnessSettings(**options), dirs, b"k" * 32)  # type: ignore[arg-type]


def run_verdict(root: Path, task: Task, source: str | None) -> tuple[str, list[str]]:
    """The judge's verdict on `source` as `task`'s entry (None: the baseline), run here through the
    real `Run` (harness_job, secret seed 7): (status, the failing cases' errors)."""
    from arena.harness.run import Run

    run = Run(harness_job(root, task, source, secret_seed=7))
    try:
        result = run.execute()
    finally:
        run.close()
    return result.status, [c.error for c in result.cases if c.error]


def _write_task(root: Path, name: str, entry_file: str, kernel: str, reference: str, **fields: object) -> Task:
    """Write tasks/t/<name>/ (the entry file and reference.py) under `root`; the record of a task
    with no exemplars or wrong candidate, whose other fields are `fields`."""
    task_dir = root / "tasks" / "t" / name
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / entry_file).write_text(kernel)
    (task_dir / "reference.py").write_text(reference)
    return Task(
        address=f"tasks/t/{name}:{name}",
        name=name,
        task_dir=f"tasks/t/{name}",
        baseline=(entry_file,),
        editable=(entry_file,),
        entry=Entry(entry_file, name),
        reference=Entry("reference.py", name),
        scalars={},
        tolerances=merge_tolerances({}),
        exemplars=(),
        wrong="",
        sources=("reference.py",),
        build="",
        bench="",
        **fields,  # type: ignore[arg-type]
    )


def build_matmul_task(root: Path, *, size: int = 2048) -> Task:
    """Write a float16 matmul task (baseline TRITON_MATMUL, torch.matmul forbidden) under `root`."""
    return _write_task(
        root, "matmul", "kernel.py", TRITON_MATMUL, MATMUL_REFERENCE,
        category=Category.TRITON2TRITON,
        description="c = a @ b",
        signature="matmul(a: [M, K] f16, b: [K, N] f16) -> [M, N] f16",
        inputs=(TensorSpec("a", ("M", "K")), TensorSpec("b", ("K", "N"))),
        outputs=(TensorSpec("c", ("M", "N")),),
        abi=(),
        cases=(
            Case("small", {"M": 40, "N": 72, "K": 96}, "float16", 1),
            Case("main", {"M": size, "N": size, "K": size}, "float16", 2, timed=True),
        ),
        forbidden=("torch.matmul", "torch.mm", "torch.Tensor.matmul", "torch.addmm", "torch.nn.functional"),
        flops="2*M*N*K",
        bytes="(M*K+K*N+M*N)*esize",
    )  # fmt: skip


def build_task(root: Path, *, baseline: str = TRITON_ADD, hip: bool = False, n: int = 3000) -> Task:
    """Write the add task under `root` (the repository root) and return its record."""
    return _write_task(
        root, "add", "kernel.hip" if hip else "kernel.py", textwrap.dedent(HIP_ADD if hip else baseline), REFERENCE,
        category=Category.HIP2HIP if hip else Category.TRITON2TRITON,
        description="z = x + y",
        signature="add(x: [N] f32, y: [N] f32) -> [N] f32",
        inputs=(TensorSpec("x", ("N",)), TensorSpec("y", ("N",))),
        outputs=(TensorSpec("z", ("N",)),),
        abi=("x", "y", "z", "N") if hip else (),
        cases=(Case("small", {"N": 129}, "float32", 1), Case("main", {"N": n}, "float32", 2, timed=True)),
        forbidden=("torch.add",),
        flops="N",
        bytes="3*N*esize",
    )  # fmt: skip


# A paged-cache write: each row of `rows` goes into the cache row its slot names, in place (the
# cache is an input and an output), and each row's sum is returned (an output the call makes).
TRITON_SCATTER = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_kernel(cache_ptr, rows_ptr, slots_ptr, total_ptr, D, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    slot = tl.load(slots_ptr + t)
    cols = tl.arange(0, BLOCK)
    row = tl.load(rows_ptr + t * D + cols, mask=cols < D, other=0.0)
    tl.store(cache_ptr + slot * D + cols, row, mask=cols < D)
    tl.store(total_ptr + t, tl.sum(row, axis=0))


def scatter(cache, rows, slots):
    T, D = rows.shape
    total = torch.empty(T, dtype=rows.dtype, device=rows.device)
    _scatter_kernel[(T,)](cache, rows, slots, total, D, BLOCK=triton.next_power_of_2(D))
    return total
"""

SCATTER_REFERENCE = """
def scatter(cache, rows, slots):
    cache[slots] = rows
    return rows.sum(dim=1)
"""

HIP_SCATTER = """
__global__ void scatter_kernel(float* cache, const float* rows, const long* slots, float* total, long D) {
    long t = blockIdx.x;
    float sum = 0.0f;
    if (threadIdx.x == 0) {
        for (long d = 0; d < D; ++d) {
            cache[slots[t] * D + d] = rows[t * D + d];
            sum += rows[t * D + d];
        }
        total[t] = sum;
    }
}

extern "C" int scatter(float* cache, const float* rows, const long* slots, float* total, long T, long D,
                       hipStream_t stream) {
    hipLaunchKernelGGL(scatter_kernel, dim3(T), dim3(32), 0, stream, cache, rows, slots, total, D);
    return (int)hipGetLastError();
}
"""


def build_scatter_task(root: Path, *, hip: bool = False, tokens: int = 200) -> Task:
    """Write the paged-cache write task under `root`: outputs `total` (made) and `cache` (in place)."""
    from arena.task.task import Distribution

    return _write_task(
        root, "scatter", "kernel.hip" if hip else "kernel.py", textwrap.dedent(HIP_SCATTER if hip else TRITON_SCATTER),
        SCATTER_REFERENCE,
        category=Category.HIP2HIP if hip else Category.TRITON2TRITON,
        description="cache[slots] = rows; total = rows.sum(1)",
        signature="scatter(cache: [S, D] f32 (written), rows: [T, D] f32, slots: [T] i64) -> [T] f32",
        inputs=(
            TensorSpec("cache", ("S", "D")),
            TensorSpec("rows", ("T", "D")),
            TensorSpec("slots", ("T",), "int64", Distribution("permutation", {"low": 0, "high": "S"})),
        ),
        outputs=(TensorSpec("total", ("T",)), TensorSpec("cache", ("S", "D"), inplace=True)),
        abi=("cache", "rows", "slots", "total", "T", "D") if hip else (),
        cases=(
            Case("small", {"S": 50, "T": 7, "D": 24}, "float32", 1),
            Case("main", {"S": 4 * tokens, "T": tokens, "D": 64}, "float32", 2, timed=True),
        ),
        forbidden=(),
        flops="T*D",
        bytes="3*T*D*esize",
    )  # fmt: skip
