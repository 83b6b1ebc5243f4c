"""What keeping the profiler on through every call would cost (#35 item 5), on a GPU.

    PYTHONPATH=src/python:tests/python python3 bench/profiler_cost.py [--blocks 6] [--calls 96] [--json FILE]

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
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
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


def one_round(
    kernel: Kernel, sets: list[list[torch.Tensor]], flusher: Flusher, spin: int
) -> tuple[list[float], list[float]]:
    pairs, host = run_calls(kernel, list(range(len(sets))), sets, None, [], lambda k, j, r: None, flusher, spin, {}, {})
    torch.cuda.synchronize()
    return [elapsed_us(s, e) for s, e in pairs], host


def measure(label: str, kernel: Kernel, n: int, blocks: int, calls: int) -> dict[str, Any]:
    from torch.autograd.profiler import profile

    flusher = Flusher(open_device("cuda", torch.cuda.current_device()))
    spin = int(SPIN_US * cycles_per_us())
    sets = [[torch.randn(n, device="cuda"), torch.randn(n, device="cuda")] for _ in range(calls)]
    one_round(kernel, sets, flusher, spin)  # compiled and warm
    off: list[float] = []
    on: list[float] = []
    host: dict[str, list[float]] = {"off": [], "on": []}
    costs: dict[str, list[float]] = {"start_ms": [], "stop_ms": [], "read_ms": [], "operations_a_call": []}
    for _ in range(blocks):
        times, spent = one_round(kernel, sets, flusher, spin)
        off.append(interquartile_mean(times))
        host["off"] += spent
        began = time.perf_counter()
        profiler = profile(use_cpu=False, use_device="cuda", use_kineto=True)
        profiler.__enter__()
        costs["start_ms"].append((time.perf_counter() - began) * 1e3)
        times, spent = one_round(kernel, sets, flusher, spin)
        on.append(interquartile_mean(times))
        host["on"] += spent
        began = time.perf_counter()
        profiler.__exit__(None, None, None)
        costs["stop_ms"].append((time.perf_counter() - began) * 1e3)
        began = time.perf_counter()
        operations = gpu_operations(profiler.kineto_results.events()) if profiler.kineto_results else []
        costs["read_ms"].append((time.perf_counter() - began) * 1e3)
        costs["operations_a_call"].append(len(operations) / calls)  # the flush's, the spin, the kernel
    return {
        "kernel": label,
        "n": n,
        "us_off": statistics.median(off),
        "us_on": statistics.median(on),
        "on_over_off": statistics.median(on) / max(statistics.median(off), 1e-9),
        "host_us_off": statistics.median(host["off"] or [0.0]),
        "host_us_on": statistics.median(host["on"] or [0.0]),
        **{key: statistics.median(values) for key, values in costs.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--calls", type=int, default=96)
    parser.add_argument("--json", help="write the rows as JSON to this file")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("profiler_cost.py needs a GPU: it times kernels with and without the profiler")
    scratch = Path(tempfile.mkdtemp(prefix="profiler-cost-"))
    rows = [
        measure("empty", empty_kernel(), 1, args.blocks, args.calls),
        measure("add", add_kernel(scratch), 1 << 16, args.blocks, args.calls),
        measure("add", add_kernel(scratch), 1 << 21, args.blocks, args.calls),
    ]
    print(f"{'kernel':8} {'n':>8} {'us off':>8} {'us on':>8} {'on/off':>7} {'host off':>9} {'host on':>8} "
          f"{'start ms':>9} {'stop ms':>8} {'read ms':>8} {'ops/call':>8}")  # fmt: skip
    for r in rows:
        print(f"{r['kernel']:8} {r['n']:>8} {r['us_off']:8.3f} {r['us_on']:8.3f} {r['on_over_off']:7.4f} "
              f"{r['host_us_off']:9.1f} {r['host_us_on']:8.1f} {r['start_ms']:9.1f} {r['stop_ms']:8.1f} "
              f"{r['read_ms']:8.1f} {r['operations_a_call']:8.2f}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
