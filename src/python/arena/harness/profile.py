"""One profiled call of the candidate: which GPU operations it started, and on which stream.

Events time the harness's stream only, so work the candidate moves to another stream escapes
them (cheat 8). After timing, when the candidate was measured faster than the baseline (hidden
work gains nothing otherwise), one more call runs under the Kineto profiler (CUPTI on CUDA,
roctracer on ROCm): every kernel, copy and fill it started must be on the harness's stream. A
fill on the harness's stream, started first, gives that stream's id in the profiler's own
numbering. The
names of the kernels that ran go into the stage log, for review (cheat 2: a kernel written but
never called shows up as absent). It runs after timing so the profiler cannot disturb a timed
call; the profiler's start (CUPTI or roctracer attaching) costs time, which is why a candidate no
faster than its baseline skips it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:
    import torch
    from torch._C._autograd import _KinetoEvent

    from arena.harness.result import CaseOutcome

FASTER = 0.99  # a case whose candidate median is below this x the baseline's gets the profiled call


@dataclass(frozen=True)
class GpuOperation:
    name: str
    kind: str  # the profiler's activity type: kernel, gpu_memcpy, gpu_memset, ...
    stream: int
    start_ns: int


def first_faster_case(cases: Iterable[CaseOutcome]) -> str | None:
    """The first timed case (CaseOutcome) whose candidate median is below FASTER x the baseline's."""
    for case in cases:
        if case.candidate_us and statistics.median(case.candidate_us) < FASTER * statistics.median(case.baseline_us):
            return str(case.name)
    return None


def profile_call(
    call: Callable[[], object], device: torch.device, mark: Callable[[str], None] = lambda label: None
) -> list[GpuOperation]:
    """The GPU operations of the marker fill and then `call`, in start order (marker first); none
    on a CPU device. `mark` is told when the profiler has started, the call returned and the
    profiler stopped."""
    import torch
    from torch.autograd.profiler import profile

    on_gpu = device.type != "cpu"  # ROCm's torch names its GPUs "cuda" too
    synchronize = torch.cuda.synchronize if on_gpu else (lambda: None)
    marker = torch.zeros(1, device=device)
    synchronize()
    # The autograd profiler, not torch.profiler.profile: that one's start asks hasattr(torch,
    # "_inductor"), which imports inductor, dynamo and triton (about 2 s) before profiling anything.
    profiler = profile(use_cpu=not on_gpu, use_device="cuda" if on_gpu else None, use_kineto=True)
    profiler.__enter__()
    mark("profiler started")
    try:
        marker.fill_(1.0)
        call()
        synchronize()
        mark("profiled call returned")
    finally:
        profiler.__exit__(None, None, None)
    mark("profiler stopped")
    if profiler.kineto_results is None:
        raise RuntimeError("the profiler returned no results")
    return gpu_operations(profiler.kineto_results.events())


def gpu_operations(events: Iterable[_KinetoEvent]) -> list[GpuOperation]:
    """The device-side profiler events, as GpuOperations sorted by start time."""
    operations = [
        GpuOperation(e.name(), _kind(e), int(e.device_resource_id()), int(e.start_ns()))
        for e in events
        if str(e.device_type()) != "DeviceType.CPU"
    ]
    return sorted(operations, key=lambda o: o.start_ns)


def _kind(event: _KinetoEvent) -> str:
    """The activity type where torch exposes it (2.13 on), else the device type."""
    kind = getattr(event, "activity_type", None)
    return str(kind()) if kind is not None else str(event.device_type()).removeprefix("DeviceType.").lower()


def off_stream(operations: Sequence[GpuOperation]) -> list[GpuOperation]:
    """The candidate's operations (everything after the marker) on any other stream than the marker's."""
    if not operations:
        return []
    harness = operations[0].stream
    return [o for o in operations[1:] if o.stream != harness]


# Kernel names of the vendor libraries (cheat 1 where the source check was evaded: a library
# reached through names built at run time still runs the library's kernels). Lower-case prefixes
# or fragments of the names the libraries' kernels carry.
LIBRARY_KERNELS = {
    "cuBLAS/cuBLASLt": (
        "nvjet",
        "cublas",
        "gemv2t_kernel",
        "gemv2n_kernel",
        "gemmk1_kernel",
        "sm90_xmma",
        "sm80_xmma",
        "ampere_",
        "volta_",
        "turing_",
        "splitkreduce_kernel",
    ),
    "cuDNN": ("cudnn", "xmma_fprop", "xmma_dgrad", "xmma_wgrad"),
    "CUTLASS": ("cutlass",),
    "rocBLAS/hipBLASLt (Tensile)": ("cijk_", "hipblaslt", "rocblas"),
    "MIOpen": ("miopen", "naive_conv"),
    "Composable Kernel": ("ck::", "kernel_gemm_xdl", "kernel_grouped_gemm"),
}


def library_of(kernel: str) -> str | None:
    """The vendor library a kernel name belongs to, or None for the candidate's own code."""
    name = kernel.lower()
    for library, marks in LIBRARY_KERNELS.items():
        if any(name.startswith(m) or (len(m) > 6 and m in name) for m in marks):
            return library
    return None


def library_kernels(candidate: Sequence[GpuOperation], baseline: Sequence[GpuOperation]) -> list[tuple[str, str]]:
    """(library, kernel) of every candidate kernel from a vendor library the baseline did not use."""
    allowed = {library_of(o.name) for o in baseline[1:]}
    found = [(library_of(o.name), o.name) for o in candidate[1:]]
    return [(library, name) for library, name in found if library is not None and library not in allowed]


def describe(operations: Sequence[GpuOperation]) -> str:
    """One line per distinct operation of the candidate: count, kind, stream, name."""
    counts: dict[tuple[str, int, str], int] = {}
    for o in operations[1:]:
        counts[(o.kind, o.stream, o.name)] = counts.get((o.kind, o.stream, o.name), 0) + 1
    lines = [f"{n} x {kind} on stream {stream}: {name[:160]}" for (kind, stream, name), n in counts.items()]
    harness = f"harness stream {operations[0].stream}" if operations else "no GPU activity recorded"
    return "\n".join([f"{len(operations) - 1 if operations else 0} GPU operation(s); {harness}", *lines])
