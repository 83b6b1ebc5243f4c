"""What a process adds to a small kernel's time, and what a kernel launch adds. One GPU; JSON out.

    PYTHONPATH=src/python python3 bench/process_offset_probe.py --out offsets.json

Each measuring process is fresh (its own context, its own modules) and times, by the harness's
own per-call procedure (timing.run_calls: spacer, read flush, inputs read back, a spin, the event
pair, outputs held; each round queued whole behind a lead spin, as the judge and the worker queue
their chunks), interleaved round by round:
  empty       no call: the empty event pair the harness takes off every call
  sleep0      one empty kernel (torch.cuda._sleep(0)); sleep0x2, x4, x8: two, four, eight of them
  copyA/B     a Triton copy of 1 MiB; A and B are the same source loaded as two modules
  copyC       the same copy with another block size (other code, another grid)
  copyA2      copyA launched twice on the same data (truth: twice the work of copyA)
  copyA4/A42  the same at 4 MiB
Three settings: the process alone on the GPU; beside a peer process that holds a context and
does nothing; beside a peer whose stream waits on an interprocess event the measuring process
records after each round (as the judge's stream waits on `done` while its worker's chunk runs).
Reported: per kernel, the score's mean (arena.scoring.stats) in every process, its spread across
processes, how the processes' offsets on copyA go with those on copyB, copyC and sleep0; and
once/twice with the empty pair taken off and with one isolated empty kernel's launch cost,
beyond a second one's, taken off as well (2 x sleep0 - sleep0x2); and whether each process's cost
of a launch in a stream is its own, so that calls of n launches read (n - 1) x the difference
between two processes once the harness has taken its offsets off (session 37's swinging no-ops).
The same one, two and eight empty kernels run again on three more streams of each process: if the
cost of a later launch differs between streams of one process as much as between processes, it
belongs to the stream (where its commands lie), not the process, and a side could choose its
stream. Each process also reports the CPUs it ran on.

Session 38 found that cost bimodal across processes on an H100 (about 1.93 or 2.09 us a later
launch, the same on every stream of a process but one) and following the swinging no-ops. The
`kinds` entry splits the processes at the widest gap of their later-launch costs. --variants runs
the same processes, interleaved, under changes that could decide a process's kind: transparent
huge pages off for it (prctl, before CUDA starts), one or 32 hardware connections
(CUDA_DEVICE_MAX_CONNECTIONS), every module loaded at once (CUDA_MODULE_LOADING=EAGER), the
address layout not randomised (personality ADDR_NO_RANDOMIZE, so every process maps alike). Each
process lists where the driver's files are mapped in it (`driver_maps`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

COPY = """
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def copy(x, y, block):
    _copy[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
"""
CALLS, ROUNDS = 48, 12
EXTRA_STREAMS = ("s1", "s2", "s3")
SIZES = {"1": 1 << 18, "4": 1 << 20}  # MiB: float32 elements
SETTINGS = ("alone", "idle_peer", "waiting_peer")
VARIANTS: dict[
    str, dict[str, str]
] = {  # name -> the measuring process's extra environment ("thp_off" also calls prctl)
    "plain": {},
    "thp_off": {},
    "one_connection": {"CUDA_DEVICE_MAX_CONNECTIONS": "1"},
    "connections_32": {"CUDA_DEVICE_MAX_CONNECTIONS": "32"},
    "eager_modules": {"CUDA_MODULE_LOADING": "EAGER"},
    "no_aslr": {},
}
_PR_SET_THP_DISABLE = 41
_ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): the same address layout in every process


def _module(name: str, root: Path) -> Any:
    import importlib.util

    path = root / f"{name}.py"
    path.write_text(COPY)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def measure(peer: str, variant: str) -> dict[str, Any]:
    """One measuring process: every kernel's per-call figures (event time, nothing taken off)."""
    import ctypes
    import tempfile

    if variant == "thp_off" and ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0):
        raise SystemExit(f"prctl(PR_SET_THP_DISABLE) failed: errno {ctypes.get_errno()}")

    import torch

    from arena.harness.backends.kernel import Kernel
    from arena.harness.device import open_device, select_backend
    from arena.harness.flush import Flusher
    from arena.harness.placement import Scatter
    from arena.harness.shared_gpu import SharedEvent, runtime
    from arena.harness.timing import cycles_per_us, elapsed_us, run_calls
    from arena.scoring.stats import summarize_samples

    device = open_device(select_backend("auto"), 0)
    flusher, scatter = Flusher(device), Scatter(device.torch_device)
    cycles = cycles_per_us()
    tmp = Path(tempfile.mkdtemp())
    mod_a, mod_b = _module("copy_a", tmp), _module("copy_b", tmp)

    def copying(module: Any, block: int, times: int) -> Callable[..., Any]:
        def invoke(inputs: Any, scalars: Any, outputs: Any, dims: Any) -> Any:
            y = torch.empty_like(inputs[0])
            for _ in range(times):
                module.copy(inputs[0], y, block)
            return (y,)

        return invoke

    def sleeping(times: int) -> Callable[..., Any]:
        def invoke(inputs: Any, scalars: Any, outputs: Any, dims: Any) -> Any:
            for _ in range(times):
                torch.cuda._sleep(0)
            return ()

        return invoke

    kernels: dict[str, tuple[Kernel | None, str]] = {
        "empty": (None, "1"),
        "sleep0": (Kernel("sleep0", sleeping(1), False), "1"),
        "sleep0x2": (Kernel("sleep0x2", sleeping(2), False), "1"),
        "sleep0x4": (Kernel("sleep0x4", sleeping(4), False), "1"),
        "sleep0x8": (Kernel("sleep0x8", sleeping(8), False), "1"),
        "copyA": (Kernel("copyA", copying(mod_a, 4096, 1), False), "1"),
        "copyB": (Kernel("copyB", copying(mod_b, 4096, 1), False), "1"),
        "copyC": (Kernel("copyC", copying(mod_a, 1024, 1), False), "1"),
        "copyA2": (Kernel("copyA2", copying(mod_a, 4096, 2), False), "1"),
        "copyA4": (Kernel("copyA4", copying(mod_a, 4096, 1), False), "4"),
        "copyA42": (Kernel("copyA42", copying(mod_a, 4096, 2), False), "4"),
    }
    streams = {name: torch.cuda.Stream() for name in EXTRA_STREAMS}
    for stream_name in EXTRA_STREAMS:
        for times in (1, 2, 8):
            name = f"sleep0x{times}@{stream_name}".replace("x1@", "@")
            kernels[name] = (Kernel(name, sleeping(times), False), "1")
    rt = runtime()
    gate = SharedEvent.create(rt)
    peer_process = None
    if peer != "alone":
        peer_process = subprocess.Popen(
            [sys.executable, __file__, "--peer", gate.handle.hex() if peer == "waiting_peer" else "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert peer_process.stdout.readline().strip() == "ready"  # type: ignore[union-attr]
    spin = int(20.0 * cycles)
    lead = int(30_000 * cycles)  # 30 ms: the whole round queued before the GPU reaches it
    samples: dict[str, list[float]] = {name: [] for name in kernels}
    late = 0
    for round_index in range(ROUNDS + 1):  # the first round compiles and warms: discarded
        for name, (kernel, size) in kernels.items():
            sets = scatter.place([[torch.randn(SIZES[size], device="cuda")] for _ in range(CALLS)])
            torch.cuda.synchronize()
            head = torch.cuda.Event()
            torch.cuda._sleep(lead)
            head.record()
            on = streams[name.split("@")[1]] if "@" in name else torch.cuda.current_stream()
            on.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(on):
                pairs, _ = run_calls(
                    kernel, list(range(CALLS)), sets, None, [], lambda k, j, r: None, flusher, spin, {}, {}, warm=True
                )
            torch.cuda.current_stream().wait_stream(on)
            late += bool(head.query())
            gate.record()
            if peer_process is not None:
                peer_process.stdin.write("round\n")  # type: ignore[union-attr]
                peer_process.stdin.flush()  # type: ignore[union-attr]
                assert peer_process.stdout.readline().strip() == "queued"  # type: ignore[union-attr]
            torch.cuda.synchronize()
            if round_index:
                samples[name] += [elapsed_us(s, e) for s, e in pairs]
    if peer_process is not None:
        peer_process.stdin.close()  # type: ignore[union-attr]
        peer_process.wait(timeout=30)
    means = {name: summarize_samples(values).mean_us for name, values in samples.items()}
    return {
        "means_us": means,
        "late_rounds": late,
        "calls": {n: len(v) for n, v in samples.items()},
        "cpus": {"allowed": sorted(os.sched_getaffinity(0)), "last": _last_cpu()},
        "driver_maps": _driver_maps(),
    }


def _driver_maps() -> list[str]:
    """Where the driver's device files and library are mapped in this process (start, size in
    KiB, file): if a kind follows an address (a doorbell page, a pushbuffer), it shows here."""
    found = []
    with open("/proc/self/maps") as file:
        for line in file:
            fields = line.split()
            if len(fields) > 5 and ("/dev/nvidia" in fields[5] or "libcuda" in fields[5] or "kfd" in fields[5]):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                found.append(f"{start:x} {(end - start) >> 10} {fields[1]} {fields[5].rsplit('/', 1)[-1]}")
    return found[:200]


def _last_cpu() -> int:
    """The CPU this process last ran on (/proc/self/stat, field 39)."""
    with open("/proc/self/stat") as file:
        return int(file.read().rsplit(")", 1)[1].split()[36])


def peer(handle: str) -> None:
    """A second context on the GPU: idle, or with its stream waiting on the measurer's gate."""
    import torch

    from arena.harness.shared_gpu import SharedEvent, runtime

    rt = runtime()
    gate = SharedEvent.open(rt, bytes.fromhex(handle)) if handle != "-" else None
    print("ready", flush=True)
    for _ in sys.stdin:
        if gate is not None:
            gate.wait()  # this stream now waits on the round the measurer queued
            torch.cuda._sleep(1)
        print("queued", flush=True)
    torch.cuda.synchronize()


def _correlation(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3 or statistics.pstdev(xs) == 0 or statistics.pstdev(ys) == 0:
        return None
    return round(statistics.correlation(xs, ys), 3)


def analyse(runs: list[dict[str, Any]]) -> dict[str, Any]:
    means = [r["means_us"] for r in runs]
    out: dict[str, Any] = {"processes": len(runs)}
    for name in means[0]:
        values = [m[name] for m in means]
        out[name] = {
            "mean_us": round(statistics.fmean(values), 4),
            "spread_us": round(max(values) - min(values), 4),
            "cv_pct": round(100 * statistics.pstdev(values) / statistics.fmean(values), 3),
            "per_process_us": [round(v, 4) for v in values],
        }
    offsets = {n: [m[n] - m["empty"] for m in means] for n in means[0]}
    out["offsets_correlate_with_copyA"] = {
        n: _correlation(offsets["copyA"], offsets[n]) for n in ("copyB", "copyC", "sleep0", "copyA4")
    }
    pair = [m["empty"] for m in means]
    launch = [2 * m["sleep0"] - m["sleep0x2"] for m in means]  # pair + isolated launch beyond a second one's
    for size, (once, twice) in {"1": ("copyA", "copyA2"), "4": ("copyA4", "copyA42")}.items():
        out[f"once_over_twice_{size}MiB"] = {
            "pair_off": [round((m[once] - p) / (m[twice] - p), 4) for m, p in zip(means, pair)],
            "launch_off": [round((m[once] - c) / (m[twice] - c), 4) for m, c in zip(means, launch)],
        }
    out["isolated_launch_beyond_pair_us"] = [round(c - p, 4) for c, p in zip(launch, pair)]
    # Does the per-process offset survive each side taking off its own launch calibration?
    out["copyA_less_own_launch_cv_pct"] = round(
        100
        * statistics.pstdev([m["copyA"] - c for m, c in zip(means, launch)])
        / statistics.fmean([m["copyA"] - c for m, c in zip(means, launch)]),
        3,
    )
    out["copyA_less_own_pair_cv_pct"] = round(
        100
        * statistics.pstdev([m["copyA"] - p for m, p in zip(means, pair)])
        / statistics.fmean([m["copyA"] - p for m, p in zip(means, pair)]),
        3,
    )
    out["copyB_less_copyA_us"] = [round(m["copyB"] - m["copyA"], 4) for m in means]
    out["launches"] = _launches(means)
    return out


def _launches(means: list[dict[str, float]]) -> dict[str, Any]:
    """Whether a process's cost of a launch in a stream is its own: the second kernel's cost and
    the mean of the third to eighth (each process), and, for every pair of processes as the judge
    and the worker, calls of n = 4 and 8 empty kernels with each side's offset taken off as the
    harness does (its one-kernel reading less the pair's mean second-kernel cost:
    judged_timing.side_offsets): their ratio, and the ratio once each side's n - 1 later launches
    are also charged at the pair's mean second-kernel cost instead of its own (1.0 if that is all
    that differs)."""
    second = [m["sleep0x2"] - m["sleep0"] for m in means]
    later = [(m["sleep0x8"] - m["sleep0x2"]) / 6 for m in means]
    pairs: dict[str, list[list[float]]] = {"4": [], "8": []}
    for i, a in enumerate(means):
        for j, b in enumerate(means[i + 1 :], i + 1):
            stream = (second[i] + second[j]) / 2
            for n in pairs:
                read = [m[f"sleep0x{n}"] - (m["sleep0"] - stream) for m in (a, b)]
                charged = [r - (int(n) - 1) * (second[k] - stream) for r, k in zip(read, (i, j))]
                pairs[n].append([round(read[1] / read[0], 4), round(charged[1] / charged[0], 4)])
    ats = ("", *(f"@{name}" for name in EXTRA_STREAMS))  # the default stream, then the others
    by_stream = [[m[f"sleep0x2{at}"] - m[f"sleep0{at}"] for at in ats] for m in means]
    return {
        "second_kernel_us": [round(v, 4) for v in second],
        "second_kernel_by_stream_us": [[round(v, 4) for v in row] for row in by_stream],
        "later_launch_by_stream_us": [
            [round((m[f"sleep0x8{at}"] - m[f"sleep0x2{at}"]) / 6, 4) for at in ats] for m in means
        ],
        "spread_within_process_us": round(statistics.fmean(max(row) - min(row) for row in by_stream), 4),
        "spread_across_processes_us": round(max(row[0] for row in by_stream) - min(row[0] for row in by_stream), 4),
        "kinds": _kinds(later),
        "third_to_eighth_us": [round(v, 4) for v in later],
        "second_with_later": _correlation(second, later),
        "pairs_as_read_and_charged_alike": pairs,
    }


def _kinds(costs: list[float]) -> dict[str, Any] | None:
    """The processes split in two at the widest gap between their sorted costs: each group's
    members (process indices) and mean, and the gap over the larger group's spread (a clean split
    of two kinds reads several times 1)."""
    if len(costs) < 4:
        return None
    order = sorted(range(len(costs)), key=costs.__getitem__)
    at = max(range(1, len(order)), key=lambda k: costs[order[k]] - costs[order[k - 1]])
    groups = [order[:at], order[at:]]
    spread = max(max(costs[i] for i in g) - min(costs[i] for i in g) for g in groups)
    gap = costs[order[at]] - costs[order[at - 1]]
    return {
        "groups": [sorted(g) for g in groups],
        "means_us": [round(statistics.fmean(costs[i] for i in g), 4) for g in groups],
        "gap_over_spread": round(gap / spread, 2) if spread else None,
    }


def _no_aslr() -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).personality(_ADDR_NO_RANDOMIZE) == -1:
        raise OSError(ctypes.get_errno(), "personality(ADDR_NO_RANDOMIZE) failed")


def _measured(setting: str, variant: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", setting, variant],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **VARIANTS[variant]},
        preexec_fn=_no_aslr if variant == "no_aslr" else None,
    )
    if done.returncode:
        raise SystemExit(f"{setting}, {variant}: a measuring process failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2], sys.argv[3])), flush=True)
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--peer":
        peer(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--processes", type=int, default=6, help="measuring processes per setting")
    parser.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS))
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=list(VARIANTS),
        default=["plain"],
        help="each a key of its own: SETTING/VARIANT",
    )
    args = parser.parse_args()
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "rounds": ROUNDS, "calls": CALLS}
    for setting in args.settings:
        keys = {variant: setting if variant == "plain" else f"{setting}/{variant}" for variant in args.variants}
        runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in args.variants}
        for _ in range(args.processes):
            for variant in args.variants:  # interleaved: a drift falls on every variant
                runs[variant].append(_measured(setting, variant))
                report[keys[variant]] = {"runs": runs[variant]}  # kept if the probe is stopped early
                args.out.write_text(json.dumps(report, indent=1))
        for variant, key in keys.items():
            report[key] = {"runs": runs[variant], "analysis": analyse(runs[variant])}
            print(key, json.dumps(report[key]["analysis"]["launches"]["kinds"]), flush=True)
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
