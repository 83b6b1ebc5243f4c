"""A task's no-op (its baseline against itself) through the product's run_harness, each timed
case's samples read chunk by chunk: is a no-op off 1.00 one side (one process) throughout, the
side timed second in a chunk pair, or the first calls of a chunk? Run on one GPU:

    PYTHONPATH=src/python python3 bench/noop_chunks.py --task tasks/triton2triton/matmul --repeats 2 --out chunks.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from arena.harness.judged_timing import first_side
from arena.harness.launch import run_harness
from arena.harness.settings import HarnessSettings
from arena.scoring.stats import compare_samples
from arena.task.load import load_task


def chunk_size(log: str, case: str) -> int | None:
    """Calls a chunk of `case`, from the time stage's log."""
    found = re.search(rf"case {re.escape(case)}: .*?(\d+) chunk\(s\) of (\d+) calls", log, re.S)
    return int(found.group(2)) if found else None


def by_chunk(baseline: list[float], candidate: list[float], per: int) -> list[dict]:
    """Per chunk, in the order timed: the side timed first, each side's median, their ratio, and
    the ratio over the chunk's first call and over the rest."""
    rows = []
    for index in range(0, min(len(baseline), len(candidate)), per):
        b, c = baseline[index : index + per], candidate[index : index + per]
        rows.append(
            {
                "first": first_side(index // per),
                "baseline_us": round(statistics.median(b), 3),
                "candidate_us": round(statistics.median(c), 3),
                "ratio": round(statistics.median(c) / statistics.median(b), 4),
                "mean_ratio": round(statistics.fmean(c) / statistics.fmean(b), 4),  # a bimodal chunk's median flips
                "first_call_ratio": round(c[0] / b[0], 4),
                "rest_ratio": round(statistics.median(c[1:]) / statistics.median(b[1:]), 4) if per > 1 else None,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, help="a task address, like tasks/triton2triton/matmul")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--same-places", action="store_true", help="settings.same_places (an experiment)")
    parser.add_argument("--baseline-worker", action="store_true", help="settings.baseline_worker (an experiment)")
    args = parser.parse_args()
    task = load_task(Path.cwd(), args.task)
    runs = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        settings = HarnessSettings(timeout_s=300, same_places=args.same_places, baseline_worker=args.baseline_worker)
        result = run_harness(task, None, Path.cwd(), settings)
        log = next((st.log for st in result.stages if st.name == "time"), "")
        cases: dict[str, dict[str, Any]] = {}
        for case in result.cases:
            per = chunk_size(log, case.name) if case.candidate_us else None
            if per:
                rows = by_chunk(list(case.baseline_us), list(case.candidate_us), per)
                cases[case.name] = {
                    # the score's ratio: both sides' sums over the pairs kept (outliers.paired_kept)
                    "noop": round(compare_samples(case.baseline_us, case.candidate_us).speedup, 4),
                    "calls_a_chunk": per,
                    "calls_a_chunk_outcome": case.calls_a_chunk,  # as the child reported it
                    "chunks": rows,
                    # every call, paired by set (call k of a chunk on set k, both sides): to replay a rule
                    "baseline_us": [round(t, 3) for t in case.baseline_us],
                    "candidate_us": [round(t, 3) for t in case.candidate_us],
                    "ratio_by_first": {
                        side: round(statistics.median(r["ratio"] for r in rows if r["first"] == side), 4)
                        for side in ("baseline", "candidate")
                        if any(r["first"] == side for r in rows)
                    },
                }
        runs.append(
            {
                "status": result.status,
                "wall_s": round(time.perf_counter() - began, 1),
                "errors": list(result.errors)[:2],
                "cases": cases,
                "time_log": log,
            }
        )
        if result.status != "PASSED":
            print(result.status, list(result.errors)[:1], flush=True)
        for line in log.splitlines():
            if "the judge saw" in line:
                print("  ", line[line.find("chunk clock") :].split("; one empty kernel")[0], flush=True)
        for name, entry in cases.items():
            print(
                result.status,
                name,
                entry["noop"],
                json.dumps(entry["ratio_by_first"]),
                [(r["first"][0], r["ratio"], r["mean_ratio"]) for r in entry["chunks"]],
                flush=True,
            )
        args.out.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
