"""What keeping the profiler on through every call would cost (#35 item 5), on a GPU.

    PYTHONPATH=src/python:tests/python python3 bench/profiler_cost.py [--blocks 6] [--calls 96]
        [--task ADDR] [--json FILE]

The one profiled call is a call of its own, and a candidate can tell (torch's profiler state, the
worker's `profile` request): it can leave a vendor library or a side stream out of that one call
alone. A profiler left on from before the candidate loads, through every call, leaves nothing to
tell apart; the judge would then read the operations of a timed chunk chosen after it ran. Before
that design is built, this measures what it costs, in one process, on the harness's own per-call
procedure (timing.run_calls: flush, spin, event pair) with small Triton kernels (an add of 2^16
and 2^21 floats, about 3 and 8 us a call, the sizes where the bound is weakest) and an empty
kernel: blocks of one round with the Kineto profiler off and one with it on (the autograd
profiler as profile.profile_call starts it, CUDA activities only), for each kernel:

- the interquartile mean of the event pairs, off and on, and their ratio (what the profiler adds
  to a timed sample; side_offsets would take off what it adds to an empty kernel);
- the host time of an invoke, off and on (what it adds to queueing a chunk);
- the profiler's start and stop, and the reading of its operations (profile.gpu_operations) for a
  round, in ms, with the operations it saw a call (the flush's, the spin, the kernel).

Its "off" blocks follow "on" ones in one process, so what the profiler's first start leaves behind
reads in both. `--task ADDR` measures that task's baseline on its first timed case instead, in
this process alone: blocks before any profiler has started ("never"), then off and on in turn. On
an H100 (2026-12-06) the always-on profiler of the branch profiler-through-chunks slowed the
kernels a HIP library launches by 1-11% through the product, and Triton's not at all: this asks
whether the slowdown comes with the profiler on, or stays once it has started. With `--cudart
shared` a HIP task's library is linked against the shared CUDA runtime (torch's) instead of nvcc's
default static copy, to ask whether the slowdown belongs to the library's own runtime.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from arena.harness.backends.kernel import Kernel
from arena.harness.device import open_device
from arena.harness.flush import Flusher
from arena.harness.judged_timing import SPIN_US
from arena.harness.profile import gpu_operations
from arena.harness.timing import cycles_per_us, elapsed_us, interquartile_mean, run_calls
from arena_testing.harness_tasks import TRITON_ADD


def add_kernel(folder: Path) -> Kernel:
    """TRITON_ADD's `add`, imported from a file as a Triton task's candidate is (Triton reads a
    `@jit` function's source from its file: code compiled from a string is refused)."""
    source = folder / "triton_add.py"
    source.write_text(TRITON_ADD)
    spec = importlib.util.spec_from_file_location("triton_add", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    add = module.add
    return Kernel(label="add", invoke=lambda inputs, scalars, outputs, dims: add(*inputs), harness_outputs=False)


def empty_kernel() -> Kernel:
    return Kernel(
        label="empty", invoke=lambda inputs, scalars, outputs, dims: torch.cuda._sleep(0), harness_outputs=False
    )


@dataclass
class Calls:
    """What one round calls: the kernel, its input sets, its harness-made outputs (HIP), scalars, dims."""

    label: str
    n: int
    kernel: Kernel
    sets: list[list[torch.Tensor]]
    outputs: list[torch.Tensor] = field(default_factory=list)
    scalars: dict[str, Any] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)


def random_calls(label: str, kernel: Kernel, n: int, calls: int) -> Calls:
    return Calls(
        label, n, kernel, [[torch.randn(n, device="cuda"), torch.randn(n, device="cuda")] for _ in range(calls)]
    )


def task_calls(address: str, scratch: Path, calls: int) -> Calls:
    """A task's baseline on its first timed case, built and loaded as the judge does (loading.py),
    with `calls` input sets drawn as its timed calls' are (families.inputs_for)."""
    from arena.harness.check import made_outputs
    from arena.harness.device import device_arch
    from arena.harness.families import inputs_for
    from arena.harness.inputs import make_scalars, spec_dtype, spec_shape
    from arena.harness.loading import build_side, load_side
    from arena.task.load import load_task

    task = load_task(Path.cwd(), address)
    case = next(c for c in task.cases if c.timed)
    device = open_device("cuda", torch.cuda.current_device())
    folder = Path.cwd() / task.task_dir
    build_side(task, folder, scratch, "baseline", "cuda", device_arch(device))
    kernel = load_side(task, folder, scratch, "baseline")
    sets = [inputs_for(task, case, seed, device.torch_device, fresh=True) for seed in range(calls)]
    made = [task.outputs[i] for i in made_outputs(task)]
    outputs = [
        torch.empty(spec_shape(spec, case), dtype=getattr(torch, spec_dtype(spec, case)), device="cuda")
        for spec in made
    ] if kernel.harness_outputs else []  # fmt: skip
    numel = sum(t.numel() for t in sets[0])
    return Calls(f"{task.name}:{case.name}", numel, kernel, sets, outputs, make_scalars(task, case), dict(case.dims))


def one_round(calls: Calls, flusher: Flusher, spin: int) -> tuple[list[float], list[float]]:
    pairs, host = run_calls(
        calls.kernel,
        list(range(len(calls.sets))),
        calls.sets,
        None,
        calls.outputs,
        lambda k, j, r: None,
        flusher,
        spin,
        calls.scalars,
        calls.dims,
    )
    torch.cuda.synchronize()
    return [elapsed_us(s, e) for s, e in pairs], host


def measure(calls: Calls, blocks: int, never: bool = False) -> dict[str, Any]:
    """`blocks` rounds off and on in turn; with `never` first `blocks` rounds before any profiler
    has started in this process (the caller's word that none has)."""
    from torch.autograd.profiler import profile

    flusher = Flusher(open_device("cuda", torch.cuda.current_device()))
    spin = int(SPIN_US * cycles_per_us())
    one_round(calls, flusher, spin)  # compiled and warm
    before = [interquartile_mean(one_round(calls, flusher, spin)[0]) for _ in range(blocks if never else 0)]
    off: list[float] = []
    on: list[float] = []
    host: dict[str, list[float]] = {"off": [], "on": []}
    costs: dict[str, list[float]] = {"start_ms": [], "stop_ms": [], "read_ms": [], "operations_a_call": []}
    for _ in range(blocks):
        times, spent = one_round(calls, flusher, spin)
        off.append(interquartile_mean(times))
        host["off"] += spent
        began = time.perf_counter()
        profiler = profile(use_cpu=False, use_device="cuda", use_kineto=True)
        profiler.__enter__()
        costs["start_ms"].append((time.perf_counter() - began) * 1e3)
        times, spent = one_round(calls, flusher, spin)
        on.append(interquartile_mean(times))
        host["on"] += spent
        began = time.perf_counter()
        profiler.__exit__(None, None, None)
        costs["stop_ms"].append((time.perf_counter() - began) * 1e3)
        began = time.perf_counter()
        operations = gpu_operations(profiler.kineto_results.events()) if profiler.kineto_results else []
        costs["read_ms"].append((time.perf_counter() - began) * 1e3)
        costs["operations_a_call"].append(len(operations) / len(calls.sets))  # the flush's, the spin, the kernel
    return {
        "kernel": calls.label,
        "n": calls.n,
        "us_never": statistics.median(before) if before else None,
        "us_off": statistics.median(off),
        "us_on": statistics.median(on),
        "on_over_off": statistics.median(on) / max(statistics.median(off), 1e-9),
        "host_us_off": statistics.median(host["off"] or [0.0]),
        "host_us_on": statistics.median(host["on"] or [0.0]),
        **{key: statistics.median(values) for key, values in costs.items()},
    }


def link_shared_cudart() -> None:
    """From here on, HIP libraries built on CUDA (nvcc) link the shared CUDA runtime."""
    from arena.harness.backends import hip

    static = hip.compile_commands

    def shared(source: Path, library: Path, backend: str, arch: str) -> list[list[str]]:
        commands = static(source, library, backend, arch)
        return [c + ["-cudart", "shared"] if c[0] == "nvcc" else c for c in commands]

    hip.compile_commands = shared  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--calls", type=int, default=96)
    parser.add_argument("--task", help="a task's baseline alone (tasks/x/y), with blocks before any profiler")
    parser.add_argument("--json", help="write the rows as JSON to this file")
    parser.add_argument(
        "--cudart", choices=("static", "shared"), default="static", help="the CUDA runtime a HIP library links"
    )
    args = parser.parse_args()
    if args.cudart == "shared":
        link_shared_cudart()
    if not torch.cuda.is_available():
        sys.exit("profiler_cost.py needs a GPU: it times kernels with and without the profiler")
    scratch = Path(tempfile.mkdtemp(prefix="profiler-cost-"))
    if args.task:
        rows = [measure(task_calls(args.task, scratch, args.calls), args.blocks, never=True)]
    else:
        rows = [
            measure(random_calls("empty", empty_kernel(), 1, args.calls), args.blocks),
            measure(random_calls("add", add_kernel(scratch), 1 << 16, args.calls), args.blocks),
            measure(random_calls("add", add_kernel(scratch), 1 << 21, args.calls), args.blocks),
        ]
    print(f"{'kernel':8} {'n':>8} {'us never':>9} {'us off':>8} {'us on':>8} {'on/off':>7} {'host off':>9} "
          f"{'host on':>8} {'start ms':>9} {'stop ms':>8} {'read ms':>8} {'ops/call':>8}")  # fmt: skip
    for r in rows:
        never = f"{r['us_never']:9.3f}" if r["us_never"] is not None else f"{'-':>9}"
        print(f"{r['kernel']:8} {r['n']:>8} {never} {r['us_off']:8.3f} {r['us_on']:8.3f} {r['on_over_off']:7.4f} "
              f"{r['host_us_off']:9.1f} {r['host_us_on']:8.1f} {r['start_ms']:9.1f} {r['stop_ms']:8.1f} "
              f"{r['read_ms']:8.1f} {r['operations_a_call']:8.2f}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
