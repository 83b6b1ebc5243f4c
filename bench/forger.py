"""How much a forger of its own samples can claim, by kernel size (#35 item 7), on a GPU.

    PYTHONPATH=src/python:tests/python python3 bench/forger.py [--factors 1 1.1 1.25 1.5] [--json FILE] \
        [--baseline-worker]

A candidate that is the baseline itself, with the worker's event-time function swapped so every
sample reads `factor` times faster than the truth (factor 1: honest), judged through the real
`Run` (the judge in this process, the candidate in its worker) on tasks of about 3, 10, 50 and
500 us a call: an elementwise add of n floats and a tiled matrix product. For each: the verdict,
the speedup the samples would have scored, and what the judge's clock saw against what the
samples claimed, us a call (from the time stage's log, or the verdict's message when caught);
for a case that passed, the same excess paired with the baseline's own (bound.paired_excess).
With --baseline-worker the baseline is timed in a worker of its own (settings.baseline_worker),
so both excesses are read through one procedure.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena_testing.harness_tasks import TRITON_ADD, TRITON_MATMUL, build_matmul_task, build_task, harness_job

# The worker's event-time function, its code swapped in place (cheat 25 of docs/harness.md), and
# the worker's identity check, which sees a swapped code since session 24, silenced the same way:
# a forger that rewrites its own process can (docs/harness.md, which defences a candidate can
# reach); what is measured here is the bound, which it cannot.
_FORGE = """
import os

_modules = getattr(os, "sy" + "s").modules
_timing = _modules["arena.harness.tim" + "ing"]
_function = getattr(_timing, "elapsed" + "_us")
_forged = getattr(lambda start, end: _elapsed_ms(start, end) * {scale!r}, "__co" + "de__")
getattr(type(_function), "__co" + "de__").__set__(_function, _forged)
_check = getattr(_modules["arena.harness.gu" + "ard"], "replaced" + "_names")
getattr(type(_check), "__co" + "de__").__set__(_check, getattr(lambda before: [], "__co" + "de__"))
"""
# (label, task builder, baseline source): about 3, 10, 50 and 500 us a call on an H200.
SIZES = (
    ("add 2^16", lambda root: build_task(root, n=1 << 16), TRITON_ADD),
    ("add 2^21", lambda root: build_task(root, n=1 << 21), TRITON_ADD),
    ("add 2^24", lambda root: build_task(root, n=1 << 24), TRITON_ADD),
    ("matmul 2048", lambda root: build_matmul_task(root, size=2048), TRITON_MATMUL),
)
_SAW = re.compile(r"the judge saw ([0-9.]+) us a call, the samples as scored ([0-9.]+) us")
_CAUGHT = re.compile(r"claim ([0-9.]+) us a call but the judge's clock saw ([0-9.]+) us")
# bound.paired_excess, logged beside the bound (not yet a verdict): the baseline's own excess, then the paired one.
_PAIRED = re.compile(
    r"baseline's own samples ([-+0-9.]+) us a call .*?less that: ([-+0-9.]+) us a call \(sd ([0-9.]+)\)"
)
_EXCESS = re.compile(r"beyond the samples' claim: ([-+0-9.]+) us a call \(sd ([0-9.]+) .*slack ([0-9.]+) us a call")


def forged(source: str, factor: float) -> str:
    return source if factor == 1.0 else source + _FORGE.format(scale=1000.0 / factor)


def judge(
    label: str, build: Any, source: str, factor: float, budget_s: float, baseline_worker: bool = False
) -> dict[str, Any]:
    from arena.harness.run import Run
    from arena.harness.verdict import Verdict

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        task = build(root)
        began = time.perf_counter()
        settings = {"backend": "auto", "budget_s_per_case": budget_s, "baseline_worker": baseline_worker}
        run = Run(harness_job(root, task, forged(source, factor), **settings))
        try:
            result = run.execute()
        except Verdict as verdict:  # the judge's own verdict, as the child would report it
            result = run.finish(verdict.status, [str(verdict)])
        finally:
            run.close()
        row: dict[str, Any] = {"size": label, "factor": factor, "status": result.status}
        row["wall_s"] = round(time.perf_counter() - began, 1)
        timed = [c for c in result.cases if c.timed and c.candidate_us]
        if timed:
            base = sum(timed[0].baseline_us) / len(timed[0].baseline_us)
            cand = sum(timed[0].candidate_us) / len(timed[0].candidate_us)
            row["scored_speedup"] = round(base / cand, 3)
        text = " ".join(s.log for s in result.stages) + " " + " ".join(result.errors)
        saw, caught, excess = _SAW.search(text), _CAUGHT.search(text), _EXCESS.search(text)
        if saw:
            row["judge_us"], row["samples_us"] = float(saw.group(1)), float(saw.group(2))
        if caught:
            row["judge_us"], row["claim_us"] = float(caught.group(2)), float(caught.group(1))
        if excess:
            row["excess_us"], row["excess_sd_us"], row["slack_us"] = (float(g) for g in excess.groups())
        paired = _PAIRED.search(text)
        if paired:
            row["baseline_excess_us"], row["paired_us"], row["paired_sd_us"] = (float(g) for g in paired.groups())
        if result.status != "PASSED":
            row["error"] = (result.errors[0] if result.errors else "")[:300]
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factors", nargs="+", type=float, default=[1.0, 1.1, 1.25, 1.5])
    parser.add_argument("--sizes", nargs="+", default=[label for label, _, _ in SIZES])
    parser.add_argument("--budget-s", type=float, default=0.3, help="the harness's budget a timed case")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline-worker", action="store_true", help="settings.baseline_worker (an experiment)")
    args = parser.parse_args()
    rows = []
    for label, build, source in SIZES:
        if label not in args.sizes:
            continue
        for factor in args.factors:
            row = judge(label, build, source, factor, args.budget_s, args.baseline_worker)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1))
    if not rows:
        sys.exit("no size chosen")


if __name__ == "__main__":
    main()
