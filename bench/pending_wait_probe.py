"""Does a worker's kernel run slower while the judge's stream waits on the worker's `done`?

Three Triton no-ops read 1-2% slow on an H100 (2026-12-06, session 34: fused_add_rms_norm,
paged_kv_gather, moe_align_block_size), though the same kernel reads alike on its own memory and
on memory the judge lends (bench/lent_memory_probe.py). One asymmetry of the harness is left: the
judge's baseline chunks run while the worker is frozen with nothing queued on the GPU, but the
worker's chunks run while the judge's stream holds a wait on the worker's `done` event
(lent.Lent.clocked: go, wait(done), snapshot, end), so two contexts have work pending and the GPU
may switch between them. This probe times the same kernel in a worker-like child, its calls
queued behind the parent's `go` as the harness queues them (a flush written before each call, a
spin, an event pair), with the parent in one of two states, and in the parent itself, interleaved
by round:

- parent: the parent queues the same chunk behind a spin of its own while the child waits on its
  input with nothing queued (as the judge's baseline chunk runs);
- alone: the child's chunk, the parent's stream holding nothing past `go`;
- waiting: the child's chunk, the parent's stream waiting on the child's `done`, then adding to a
  byte and recording an event (as the judge's does during the candidate's chunk).

"parent" against "waiting" is the harness's no-op; "alone" against "waiting" isolates the wait.
Two more modes tell the process from the interprocess `go` the child's calls wait on:

- parent-go: the parent's chunk queued behind a wait on an interprocess event it recorded itself
  after its spin (the child idle);
- child-own: the child's chunk queued behind a spin of its own, no `go`, the parent idle.

Session 35 (an H100): the child's chunk read 0.8% (qwen2), 16% (64 x 4096) and 1.3% (five
launches) slower than the parent's, alone as waiting: not the judge's wait.

    PYTHONPATH=src/python python3 bench/pending_wait_probe.py [--rounds 40] [--json FILE]

A second child (`--modes parent alone sibling`): "sibling" is the same chunk in another
worker-like child, queued behind `go` like the first. Whether two children read alike where a
child and its parent do not says whether the baseline, timed in a worker of its own, would
read as the candidate does (issue #36 item 2: a no-op of a 3 us kernel reads 1.02-1.06).

Kernels: triton2triton fused_add_rms_norm's baseline on its qwen2-7b-16k-bf16 case (16384 x 3584
bfloat16, 2 calls a chunk, as the harness chunks it), on 64 x 4096 (48 calls a chunk), and on
64 x 4096 launched five times between one event pair (48 calls a chunk: a call of several
launches, as moe_align_block_size's, whose no-op read 0.6 us a call slow with warm inputs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import torch

from arena.harness.shared_gpu import SharedEvent, runtime
from arena.harness.timing import cycles_per_us

REPO_ROOT = Path(__file__).resolve().parent.parent
ADD_RMS_NORM = REPO_ROOT / "tasks/triton2triton/fused_add_rms_norm/kernel.py"
# rows, hidden, calls a chunk, launches a call
CASES = {
    "qwen2-7b-16k": (16384, 3584, 2, 1),
    "small-64x4096": (64, 4096, 48, 1),
    "small-x5": (64, 4096, 48, 5),
    "tiny-16x2048": (16, 2048, 48, 1),
}
FLUSH_BYTES = 256 << 20
SPIN_US, QUEUE_MS = 20, 30
MODES = ("parent", "alone", "waiting", "parent-go", "child-own", "sibling")


def norm_call(rows: int, hidden: int) -> Callable[[], Any]:
    spec = importlib.util.spec_from_file_location("probe_norm", ADD_RMS_NORM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, residual = (torch.randn(rows, hidden, device="cuda").to(torch.bfloat16) for _ in range(2))
    weight = torch.randn(hidden, device="cuda").to(torch.bfloat16)
    return lambda: module.fused_add_rms_norm(x, residual, weight, 1e-6)


class Chunks:
    """Each case's call, compiled, and the harness's per-call procedure around it."""

    def __init__(self) -> None:
        self.calls = {name: norm_call(rows, hidden) for name, (rows, hidden, _, _) in CASES.items()}
        self.scratch = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.spin = int(SPIN_US * cycles_per_us())
        for call in self.calls.values():
            for _ in range(2):
                call()  # compiled, warm
        torch.cuda.synchronize()

    def queue(self, name: str) -> list[tuple[torch.cuda.Event, torch.cuda.Event]]:
        """The case's chunk queued on the current stream: per call a flush, a spin, an event pair
        around the call's launches."""
        _, _, count, launches = CASES[name]
        pairs = []
        for _ in range(count):
            self.scratch.fill_(1)
            torch.cuda._sleep(self.spin)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(launches):
                self.calls[name]()
            end.record()
            pairs.append((start, end))
        return pairs


def times_us(pairs: list[tuple[torch.cuda.Event, torch.cuda.Event]]) -> list[float]:
    return [start.elapsed_time(end) * 1000.0 for start, end in pairs]


def child(go_handle: str, done_handle: str) -> None:
    """Per line "CASE": queue that case's chunk behind `go`, say "queued", then reply its times;
    "CASE own": the chunk behind a spin of its own instead of `go`."""
    rt = runtime()
    go, done = SharedEvent.open(rt, bytes.fromhex(go_handle)), SharedEvent.open(rt, bytes.fromhex(done_handle))
    chunks = Chunks()
    print(f"ready {cycles_per_us():.2f}", flush=True)  # its spin's calibration, for the record
    for line in sys.stdin:
        name, *own = line.split()
        if own:
            torch.cuda._sleep(int(QUEUE_MS * 1000 * cycles_per_us()))
        else:
            go.wait()
        pairs = chunks.queue(name)
        done.record()
        print("queued", flush=True)
        torch.cuda.synchronize()
        print(json.dumps(times_us(pairs)), flush=True)


def own_chunk(chunks: Chunks, name: str, go: SharedEvent | None = None) -> list[float]:
    """The case's chunk in this process, queued whole behind a spin (as the judge's baseline);
    with `go`, behind a wait on that interprocess event, recorded after the spin."""
    torch.cuda._sleep(int(QUEUE_MS * 1000 * cycles_per_us()))
    if go is not None:
        go.record()
        go.wait()
    pairs = chunks.queue(name)
    torch.cuda.synchronize()
    return times_us(pairs)


def chunk(process: subprocess.Popen[str], name: str, mode: str, go: SharedEvent, done: SharedEvent) -> list[float]:
    """One chunk of the child's, queued behind this process's spin and `go`, in `mode`."""
    assert process.stdin is not None and process.stdout is not None
    byte = torch.zeros(1, dtype=torch.uint8, device="cuda")
    torch.cuda._sleep(int(QUEUE_MS * 1000 * cycles_per_us()))
    if mode != "child-own":
        go.record()
    process.stdin.write(name + (" own\n" if mode == "child-own" else "\n"))
    process.stdin.flush()
    if process.stdout.readline().strip() != "queued":
        raise RuntimeError("the child did not queue its chunk")
    if mode == "waiting":
        done.wait()
        byte.add_(1)
        torch.cuda.Event().record()
    torch.cuda.synchronize()
    return [float(t) for t in json.loads(process.stdout.readline())]


def start_child(command: list[str]) -> tuple[subprocess.Popen[str], float]:
    """A worker-like child started and ready: (the process, its spin's cycles a us)."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    ready = process.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise RuntimeError(f"the child did not start (exit {process.wait()})")
    return process, float(ready[1])


def ratio_pairs(modes: tuple[str, ...]) -> list[tuple[str, str]]:
    """The ratios printed: the parent and the sibling against the child, the parent against its own
    interprocess wait and the child's own spin, where those modes ran."""
    wanted = [("parent", "waiting"), ("alone", "waiting"), ("parent", "parent-go"), ("parent", "child-own")]
    wanted += [("parent", "alone"), ("sibling", "alone"), ("parent", "sibling")]
    return [(a, b) for a, b in wanted if a in modes and b in modes]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES[:5])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    rt = runtime()
    go, done = SharedEvent.create(rt), SharedEvent.create(rt)
    command = [sys.executable, __file__, "--child", go.handle.hex(), done.handle.hex()]
    modes = tuple(args.modes)
    children = {"child": start_child(command), **({"sibling": start_child(command)} if "sibling" in modes else {})}
    chunks = Chunks()
    samples: dict[str, list[float]] = {f"{n}/{m}": [] for n in CASES for m in modes}
    for r in range(args.rounds):
        for name in CASES:
            for mode in modes if r % 2 == 0 else tuple(reversed(modes)):
                if mode.startswith("parent"):
                    taken = own_chunk(chunks, name, go if mode == "parent-go" else None)
                elif mode == "sibling":
                    taken = chunk(children["sibling"][0], name, "alone", go, done)
                else:
                    taken = chunk(children["child"][0], name, mode, go, done)
                samples[f"{name}/{mode}"] += taken
    for process, _ in children.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait()
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "rounds": args.rounds, "modes": modes}
    # Each process's spin calibration (cycles a us): a spin shorter in one could leave its flush
    # still draining when the call starts.
    result["cycles_per_us"] = {"parent": round(cycles_per_us(), 2), **{k: c for k, (_, c) in children.items()}}
    print("cycles a us: " + ", ".join(f"{k} {v}" for k, v in result["cycles_per_us"].items()))
    for name in CASES:
        row = {m: samples[f"{name}/{m}"] for m in modes}
        means = {m: statistics.fmean(sorted(v)[len(v) // 10 : len(v) - len(v) // 10]) for m, v in row.items()}
        medians = {m: statistics.median(v) for m, v in row.items()}
        result[name] = {"trimmed_mean_us": means, "median_us": medians, "samples": len(row[modes[0]])}
        print(
            f"{name:14s} " + "  ".join(f"{m} {means[m]:9.3f}" for m in modes) + f" us ({len(row[modes[0]])} calls each)"
        )
        print(f"{'':14s} " + "  ".join(f"{a}/{b} {means[a] / means[b]:.4f}" for a, b in ratio_pairs(modes)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
