"""Does an atomics-bound kernel's time depend on where its output lies? (the histogram no-op, #17)

On the H200 the triton2triton histogram's no-op read 0.82 through the judge (bytes-16m: baseline
205 us, candidate 375 us, the same in three evaluations), while every other task read 1.00 +- 0.5%.
Its baseline adds each 1024-element block's counts into the B global counters with atomics, so the
counters' 1 KiB takes every one of N / 1024 x B atomic adds. This probe times that kernel, and
the task's exemplar (16x fewer atomics), in one process with the counters at many places of one
buffer: the same inputs, the same code, only the address of the output moves.

    python3 bench/atomics_placement_probe.py [--places 24] [--calls 15]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", type=int, default=24)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
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
