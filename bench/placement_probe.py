"""Does where a small kernel's buffers lie change its time? Run on one GPU; writes a JSON report.

    PYTHONPATH=src/python python3 bench/placement_probe.py --out placement.json

A Triton copy of SIZE bytes is timed as the harness times a call (read flush, inputs read back
into the cache, event pair) with its input and output at PLACES different places, the places
taken in turn (round r times every place once), so a drift of the GPU's clock falls on every
place alike. Places are either separate allocations ("allocations": what two processes' caching
allocators give) or random 4 KiB-aligned offsets inside one large block ("offsets"); a third
kind ("one") reuses a single pair, as a process that frees each call's output does. Reported per
kind: each place's median, the spread of those medians (CV, max/min) and the median CV of the
samples within one place. Each process run is one repeat (--processes starts that many).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from arena.harness.device import open_device, select_backend
from arena.harness.flush import Flusher
from arena.harness.timing import elapsed_us


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def copy_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    n = src.numel()
    _copy[(triton.cdiv(n, 4096),)](src, dst, n, BLOCK=4096)


def timed_copy(src: torch.Tensor, dst: torch.Tensor, flusher: Flusher) -> tuple[torch.cuda.Event, torch.cuda.Event]:
    """One call as the harness times it: read flush, the input read back, the event pair."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    flusher.run()
    flusher.touch([src])
    start.record()
    copy_into(src, dst)
    end.record()
    return start, end


def places(kind: str, count: int, elements: int, rng: random.Random) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if kind == "one":
        pair = (torch.randn(elements, device="cuda"), torch.empty(elements, device="cuda"))
        return [pair] * count
    if kind == "allocations":
        return [(torch.randn(elements, device="cuda"), torch.empty(elements, device="cuda")) for _ in range(count)]
    pool = torch.empty(1 << 29, device="cuda")  # 2 GiB of float32
    slots = pool.numel() // elements
    chosen = rng.sample(range(slots - 1), 2 * count)
    out = []
    for k in range(count):
        shift = rng.randrange(0, elements // 1024) * 1024  # 4 KiB steps inside the slot
        src = pool[chosen[2 * k] * elements + shift :][:elements]
        dst = pool[chosen[2 * k + 1] * elements + shift :][:elements]
        src.normal_()
        out.append((src, dst))
    return out


def probe(kind: str, count: int, rounds: int, elements: int, flusher: Flusher) -> dict:
    rng = random.Random()
    pairs = places(kind, count, elements, rng)
    samples: list[list[float]] = [[] for _ in pairs]
    for src, dst in pairs[:2]:  # compile and first touch outside the samples
        copy_into(src, dst)
    for _ in range(rounds):
        events = []
        for src, dst in pairs:
            events.append(timed_copy(src, dst, flusher))
        torch.cuda.synchronize()
        for k, (start, end) in enumerate(events):
            samples[k].append(elapsed_us(start, end))
    medians = [statistics.median(s) for s in samples]
    within = [statistics.pstdev(s) / statistics.fmean(s) for s in samples]
    return {
        "medians_us": [round(m, 3) for m in medians],
        "places_cv": statistics.pstdev(medians) / statistics.fmean(medians) if len(set(map(id, pairs))) > 1 else 0.0,
        "max_over_min": max(medians) / min(medians),
        "within_cv_median": statistics.median(within),
        "median_us": statistics.median(medians),
    }


def per_call(kind: str, groups: int, calls: int, elements: int, flusher: Flusher) -> dict:
    """Every call at a new place: the input ("inputs"), the output ("outputs") or both ("both") at
    random 4 KiB-aligned offsets of a 2 GiB pool, the other fixed; or ("shim") the input at a random
    offset and the output from the caching allocator after a random-sized allocation, both held
    until the group ends (what a harness can do about outputs a candidate allocates). Reported:
    the median of each group of `calls` (an evaluation's median, in miniature) and their spread."""
    rng = random.Random()
    pool = torch.empty(1 << 29, device="cuda")
    pool.normal_()
    last = pool.numel() - elements
    fixed_src, fixed_dst = torch.randn(elements, device="cuda"), torch.empty(elements, device="cuda")

    def at() -> torch.Tensor:
        start = rng.randrange(0, last // 1024) * 1024
        return pool[start : start + elements]

    copy_into(fixed_src, fixed_dst)
    medians, within = [], []
    for _ in range(groups):
        events, held = [], []
        for _ in range(calls):
            src = at() if kind in ("inputs", "both", "shim") else fixed_src
            if kind == "shim":
                held.append(torch.empty(rng.randrange(0, 64 << 20) // 4 + 1, device="cuda"))
                dst = torch.empty(elements, device="cuda")
                held.append(dst)
            else:
                dst = at() if kind in ("outputs", "both") else fixed_dst
            events.append(timed_copy(src, dst, flusher))
        torch.cuda.synchronize()
        times = [elapsed_us(a, b) for a, b in events]
        medians.append(statistics.median(times))
        within.append(statistics.pstdev(times) / statistics.fmean(times))
    return {
        "group_medians_us": [round(m, 3) for m in medians],
        "groups_cv": statistics.pstdev(medians) / statistics.fmean(medians),
        "within_cv_median": statistics.median(within),
        "median_us": statistics.median(medians),
    }


COPIES = """
import triton
import triton.language as tl
""" + "".join(
    f"""

@triton.jit
def copy{k}(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)
"""
    for k in range(4)
)


def code_and_streams(elements: int, flusher: Flusher, rounds: int = 60) -> dict:
    """Is there a constant a call pays that depends on where the kernel's code lies or on which
    stream (hardware queue) launches it? Four copies of the same kernel (four code objects) on
    four streams, every call's input at a random place; the median of each (copy, stream)."""
    import importlib.util
    import tempfile

    folder = Path(tempfile.mkdtemp())
    (folder / "copies.py").write_text(COPIES)
    spec = importlib.util.spec_from_file_location("copies", folder / "copies.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    kernels = [getattr(module, f"copy{k}") for k in range(4)]
    streams = [torch.cuda.Stream() for _ in range(4)]
    rng = random.Random()
    pool = torch.empty(1 << 29, device="cuda")
    pool.normal_()
    last = pool.numel() - elements
    dst = torch.empty(elements, device="cuda")
    grid = (triton.cdiv(elements, 4096),)
    for kernel in kernels:
        kernel[grid](pool, dst, elements, BLOCK=4096)
    torch.cuda.synchronize()
    samples: dict[tuple[int, int], list[float]] = {(k, s): [] for k in range(4) for s in range(4)}
    for _ in range(rounds):
        events = []
        for k, s in samples:
            with torch.cuda.stream(streams[s]):
                start_at = rng.randrange(0, last // 1024) * 1024
                src = pool[start_at : start_at + elements]
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                flusher.run()
                flusher.touch([src])
                a.record()
                kernels[k][grid](src, dst, elements, BLOCK=4096)
                b.record()
                events.append(((k, s), a, b))
            torch.cuda.current_stream().wait_stream(streams[s])
            for other in streams:
                other.wait_stream(streams[s])
        torch.cuda.synchronize()
        for key, a, b in events:
            samples[key].append(elapsed_us(a, b))
    medians = {f"copy{k}/stream{s}": round(statistics.median(v), 3) for (k, s), v in samples.items()}
    by_copy = [statistics.median([x for (k, _), v in samples.items() if k == c for x in v]) for c in range(4)]
    by_stream = [statistics.median([x for (_, s), v in samples.items() if s == c for x in v]) for c in range(4)]
    return {"medians_us": medians, "by_copy_us": by_copy, "by_stream_us": by_stream}


def one_process(size: int, count: int, rounds: int) -> dict:
    device = open_device(select_backend("auto"), 0)
    flusher = Flusher(device)
    elements = size // 4
    report = {kind: probe(kind, count, rounds, elements, flusher) for kind in ("one", "allocations", "offsets")}
    for kind in ("inputs", "outputs", "both", "shim"):
        report[f"per_call_{kind}"] = per_call(kind, 16, 100, elements, flusher)
    report["code_and_streams"] = code_and_streams(elements, flusher)
    return report


def code_study(size: int) -> dict:
    device = open_device(select_backend("auto"), 0)
    return code_and_streams(size // 4, Flusher(device))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes-mib", type=float, nargs="+", default=[2.0, 4.0])
    parser.add_argument("--places", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code-only", action="store_true", help="only the code-and-streams study")
    args = parser.parse_args()
    if args.child and args.code_only:
        args.out.write_text(
            json.dumps({str(mib): {"code_and_streams": code_study(int(mib * (1 << 20)))} for mib in args.sizes_mib})
        )
        return
    if args.child:
        report = {str(mib): one_process(int(mib * (1 << 20)), args.places, args.rounds) for mib in args.sizes_mib}
        args.out.write_text(json.dumps(report))
        return
    runs = []
    for p in range(args.processes):
        part = args.out.with_suffix(f".{p}.json")
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                "--out",
                str(part),
                "--places",
                str(args.places),
                "--rounds",
                str(args.rounds),
                "--sizes-mib",
                *map(str, args.sizes_mib),
            ]
            + (["--code-only"] if args.code_only else []),
            check=True,
        )
        runs.append(json.loads(part.read_text()))
        summary = {
            mib: {
                kind: {
                    k: v if isinstance(v, list) else round(v, 4) for k, v in r.items() if not k.endswith("medians_us")
                }
                for kind, r in kinds.items()
            }
            for mib, kinds in runs[-1].items()
        }
        print(f"process {p}:", json.dumps(summary), flush=True)
        args.out.write_text(json.dumps({"runs": runs}, indent=1))


if __name__ == "__main__":
    main()
