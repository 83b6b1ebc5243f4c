"""Does an atomics-bound kernel's time depend on where its output lies? (the histogram no-op, #17)

On the H200 the triton2triton histogram's no-op read 0.82 through the judge (bytes-16m: baseline
205 us, candidate 375 us, the same in three evaluations), while every other task read 1.00 +- 0.5%.
Its baseline adds each 1024-element block's counts into the B global counters with atomics, so the
counters' 1 KiB takes every one of N / 1024 x B atomic adds. This probe times that kernel, and
the task's exemplar (16x fewer atomics), in one process with the counters at many places of one
buffer: the same inputs, the same code, only the address of the output moves.

    python3 bench/atomics_placement_probe.py [--places 24] [--calls 15]

With --harness-chunks C it instead times the baseline's own entry point (which allocates its
counters) by the harness's per-call procedure (timing.run_calls: scattered fresh inputs, the
spacer, held outputs, the flush), C chunks of --harness-calls calls, and reports each call's time
beside the address of its counters and its input: which address bits, if any, go with the fast
calls, and whether the fast calls come a chunk at a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import sys
from pathlib import Path

import torch

TASK = Path(__file__).resolve().parent.parent / "tasks" / "triton2triton" / "histogram"
CASES = {"bytes-16m": (1 << 24, 256), "experts-8m": (1 << 23, 64), "bins1000-16m": (1 << 24, 1000)}


def load(path: Path, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def launcher(module: object, kind: str):  # type: ignore[no-untyped-def]
    """A call of the module's kernel that writes into `counts` (a view we place), as its entry
    point would into the tensor it allocates."""
    import triton

    kernel = module._histogram_kernel  # type: ignore[attr-defined]
    if kind == "baseline":
        return lambda x, counts, n, b: kernel[(triton.cdiv(n, 1024),)](
            x, counts, n, b, BINS=triton.next_power_of_2(b), BLOCK=1024
        )
    return lambda x, counts, n, b: kernel[(triton.cdiv(n, 4096 * 4),)](
        x, counts, n, b, BINS=triton.next_power_of_2(b), BLOCK=4096, CHUNKS=4, num_warps=8
    )


def time_at(launch, x, counts, n, b, calls: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(calls):
        counts.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(x, counts, n, b)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(samples)


def harness_calls(chunks: int, calls: int, case: str) -> dict:
    """The baseline entry timed as the harness times it; per call: time, counters' and input's address."""
    from arena.harness.backends.kernel import Kernel
    from arena.harness.device import open_device, select_backend
    from arena.harness.flush import Flusher
    from arena.harness.placement import Scatter, Spacer
    from arena.harness.timing import elapsed_us, run_calls

    device = open_device(select_backend("auto"), 0)
    flusher, scatter = Flusher(device), Scatter(device.torch_device)
    entry = load(TASK / "kernel.py", "histogram_entry").histogram  # type: ignore[attr-defined]
    n, b = CASES[case]

    kernel = Kernel("histogram", lambda inputs, scalars, outputs, dims: entry(inputs[0], b), False)

    entry(torch.zeros(n, dtype=torch.int32, device="cuda"), b)  # compile
    rows, aimed = [], []
    for chunk in range(chunks):
        drawn = [[torch.randint(0, b, (n,), dtype=torch.int32, device="cuda")] for _ in range(calls)]
        sets = scatter.place(drawn)
        del drawn
        seen: list[tuple[int, int]] = []
        spacer = Spacer(device.torch_device)

        def note(k: int, j: int, result: torch.Tensor, seen: list = seen, sets: list = sets) -> None:
            seen.append((result.data_ptr(), sets[j][0].data_ptr()))

        pairs, _ = run_calls(kernel, list(range(calls)), sets, None, [], note, flusher, 0, {}, {}, spacer=spacer)
        torch.cuda.synchronize()
        aimed.append((spacer.landed, spacer.aimed_at))
        for k, (start, end) in enumerate(pairs):
            rows.append(
                {
                    "chunk": chunk,
                    "call": k,
                    "us": round(elapsed_us(start, end), 2),
                    "counts_ptr": seen[k][0],
                    "input_ptr": seen[k][1],
                }
            )
    times = sorted(r["us"] for r in rows if r["call"] or r["chunk"])  # the very first call is slow
    # Fast or slow: split at the widest gap between sorted times, if it is wide (two humps).
    gap, cut = max(((b - a, (a + b) / 2) for a, b in zip(times, times[1:])), default=(0.0, times[-1]))
    cut = cut if gap > 0.1 * times[0] else times[-1] + 1
    fast = [r["us"] < cut for r in rows]
    by_bit = {}
    for key in ("counts_ptr", "input_ptr"):
        for bit in range(7, 34):
            ones = [f for f, r in zip(fast, rows) if int(r[key]) >> bit & 1]
            zeros = [f for f, r in zip(fast, rows) if not int(r[key]) >> bit & 1]
            if ones and zeros:
                by_bit[f"{key} bit {bit}"] = (round(sum(zeros) / len(zeros), 2), round(sum(ones) / len(ones), 2))
    telling = {k: v for k, v in by_bit.items() if abs(v[0] - v[1]) > 0.4}
    pattern = ["".join("F" if f else "s" for f, r in zip(fast, rows) if r["chunk"] == c) for c in range(chunks)]
    return {
        "case": case,
        "min_us": min(times),
        "max_us": max(times),
        "cut_us": cut,
        "fast_share": sum(fast) / len(fast),
        "chunks": pattern,
        "landed_where_aimed": aimed,
        "fast_share_by_bit_0_1": by_bit,
        "telling_bits": telling,
        "calls": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", type=int, default=24)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--harness-chunks", type=int, default=0)
    parser.add_argument("--harness-calls", type=int, default=31)
    parser.add_argument("--case", default="bytes-16m", choices=sorted(CASES))
    args = parser.parse_args()
    if args.harness_chunks:
        found = harness_calls(args.harness_chunks, args.harness_calls, args.case)
        print(json.dumps({k: v for k, v in found.items() if k not in ("calls", "fast_share_by_bit_0_1")}, indent=1))
        if args.out:
            args.out.write_text(json.dumps(found, indent=1))
        return
    kernels = {
        "baseline": launcher(load(TASK / "kernel.py", "histogram_baseline"), "baseline"),
        "exemplar": launcher(load(TASK / "exemplars" / "block_local" / "kernel.py", "histogram_exemplar"), "exemplar"),
    }
    pool = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    rng = random.Random(7)
    # Places: a few chosen alignments, then random 128-byte-aligned offsets across 64 MiB.
    offsets = [0, 128, 256, 512, 1024, 2048, 4096, 65536] + [
        rng.randrange(0, (64 << 20) - 8192, 128) for _ in range(args.places)
    ]
    report = {"device": torch.cuda.get_device_name(), "cases": {}}
    for case, (n, b) in CASES.items():
        x = torch.randint(0, b, (n,), dtype=torch.int32, device="cuda")
        rows = {}
        for kind, launch in kernels.items():
            launch(x, pool[: 4 * b].view(torch.int32), n, b)  # compile
            times = [time_at(launch, x, pool[o : o + 4 * b].view(torch.int32), n, b, args.calls) for o in offsets]
            rows[kind] = {
                "by_offset_us": dict(zip(map(str, offsets), [round(t, 2) for t in times])),
                "min_us": round(min(times), 2),
                "max_us": round(max(times), 2),
                "cv_pct": round(100 * statistics.pstdev(times) / statistics.mean(times), 2),
            }
            print(case, kind, rows[kind]["min_us"], rows[kind]["max_us"], f"CV {rows[kind]['cv_pct']}%", flush=True)
        report["cases"][case] = rows
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
