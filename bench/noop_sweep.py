"""The no-op of every task through the product (#37 item 2: each within 1.00 +- 0.5%), in slices
of whatever time a GPU is lent, and what it says.

    PYTHONPATH=src/python python3 bench/noop_sweep.py run --json F [--stop-after-s 540] [--tasks DIR ...] \
        [--match-launches N] [--mirror-lent] [--baseline-worker]
    python3 bench/noop_sweep.py summary F [F ...] [--json OUT]
    python3 bench/noop_sweep.py compare A [A ...] --vs B [B ...]

run: `arena suite --no-cache --resume --json F` over every task folder (or --tasks), sent SIGINT
after --stop-after-s so that F keeps every evaluation that finished (docs/cli.md); the next run
with the same F goes on where it stopped (carry F back to the device). Then the summary of F.
summary: per task, the geometric mean of its timed cases' speedups (the no-op's reading), the
range over its cases, and where each side's large outputs landed (the time stage's count); then
how many tasks read within +-0.5% and +-1%, and the landing over all cases, judge and worker; how
many series were timed again as foul (bound.first_fair), and why each evaluation not PASSED failed.
Several files (rounds of the same tasks) are read in turn, each task's rounds side by side.
Each reading also shows its process pair's launch difference: the worker's cost of a second empty
kernel behind the first less the judge's, the mean over the task's cases (the time stage logs
both). The harness charges both sides the pair's mean, so the two sides of a call of n launches
differ by (n - 1) x that difference; the summary gives its correlation with the log of the readings.
The suite's judges start up to --match-launches N fresh workers each (default: the harness's, 3)
until one's later launch is the judge's kind (matching.Workers.match); the summary then shows each
reading's kept worker's later launch less the judge's (`kind`: the last read, or the nearest
where none matched) and how many workers it took; last, the setup's median and the matching's
median time by workers tried, over all tasks and split by HIP and Triton candidates (a HIP one's
library is built beside the setup, so the two costs differ). The run's file keeps only what the
same harness measured in the same environment: after a change to the harness, or on another
machine, it starts over (suite_file).
compare: an A/B of two settings run in interleaved rounds (A's files against --vs B's): per task
each arm's mean reading (geometric, over its rounds) and its distance from 1.00, then over the
tasks both arms read: how many are within +-0.5% in each, and the mean distance from 1.00 in each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
_LANDED = re.compile(r"where placement aimed them: judge (\d+) of (\d+), worker (\d+) of (\d+)")
_SECOND = re.compile(r"a second [\d.]+ us \(([\d.]+) and ([\d.]+)\)")  # judged_timing's log: judge, worker
_KINDS = re.compile(r"a later launch \(us\), worker by worker: (.*)")  # the setup's log (--match-launches)
_NEAREST = re.compile(r"worker (\d+) kept, the nearest")  # where none matched and an earlier one was nearer
_KIND = re.compile(r"judge ([\d.]+), worker ([\d.]+)")
_SECOND_SIDE = re.compile(r"the side timed second read ([-+\d.]+)% faster")  # judged_timing.second_side_gain
# The setup's marks around the matching (run.py): the judge made, and its last reading of a worker.
_HIP_CATEGORIES = ("hip2hip", "torch2hip")  # the candidate a HIP library: a build beside the setup
_CALIBRATED = re.compile(r"([\d.]+)s judge calibrated")
_READ = re.compile(r"([\d.]+)s a later launch \(us\)")
_FOUL = "a series called foul, timed again on fresh sets"  # the time stage's log (bound.first_fair)


def task_folders() -> list[str]:
    return sorted(str(p.parent.relative_to(REPO)) for p in REPO.glob("tasks/*/*/BUILD"))


def run(
    json_file: Path, tasks: list[str], stop_after_s: float, match_launches: int | None = None, flags: Sequence[str] = ()
) -> int:
    """The suite over `tasks`, resumed from `json_file`, interrupted after `stop_after_s`."""
    argv = [sys.executable, "-m", "arena.cli.main", "--repo-root", str(REPO), "suite", "--no-cache"]
    argv += ["--resume", "--json", str(json_file), "--tasks", *tasks]
    if match_launches is not None:  # else the harness's default
        argv += ["--match-launches", str(match_launches)]
    argv += list(flags)  # the suite's experiments: --mirror-lent, --baseline-worker
    suite = subprocess.Popen(argv, env=os.environ.copy(), stdout=subprocess.DEVNULL)
    try:
        return suite.wait(timeout=stop_after_s)
    except subprocess.TimeoutExpired:
        suite.send_signal(signal.SIGINT)  # it reports what finished and writes the file whole
        return suite.wait()


def read_tasks(path: Path) -> dict[str, dict[str, Any]]:
    """label -> {status, geomean, low, high, landing: [judge landed, aimed, worker landed, aimed]}."""
    document = json.loads(path.read_text())
    tasks: dict[str, dict[str, Any]] = {}
    for evaluation in document.get("evaluations", []):
        timed = [c for c in evaluation.get("cases", []) if c.get("timed") and c.get("speedup")]
        speedups = [c["speedup"] for c in timed]
        # a no-op's 95% interval should hold 1.00: the cases whose interval does
        held = sum(c.get("speedup_ci_low", 0) <= 1.0 <= c.get("speedup_ci_high", 0) for c in timed)
        landing, seconds, kinds, kept, fouls = [0, 0, 0, 0], [], [], -1, 0
        second_side: list[float] = []
        setup_s, matching_s = None, None
        for stage in evaluation.get("stages", []):
            if stage.get("name") == "setup":
                setup_s = stage.get("seconds")
                begun, read = (pattern.search(stage.get("log", "")) for pattern in (_CALIBRATED, _READ))
                matching_s = float(read.group(1)) - float(begun.group(1)) if begun and read else None
            log = stage.get("log", "") if stage.get("name") == "time" else ""
            fouls += log.count(_FOUL)
            second_side += [float(gain) for gain in _SECOND_SIDE.findall(log)]
            for found in _LANDED.finditer(log):
                landing = [total + int(n) for total, n in zip(landing, found.groups())]
            seconds += [float(worker) - float(judge) for judge, worker in _SECOND.findall(log)]
            matched = _KINDS.search(stage.get("log", "")) if stage.get("name") == "setup" else None
            kinds += [(float(j), float(w)) for j, w in _KIND.findall(matched.group(1))] if matched else []
            nearest = _NEAREST.search(stage.get("log", "")) if matched else None
            kept = int(nearest.group(1)) - 1 if nearest else kept
        tasks[evaluation["label"]] = {
            "status": evaluation.get("status", "?"),
            "geomean": math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None,
            "low": min(speedups, default=None),
            "high": max(speedups, default=None),
            "landing": landing,
            "launch_difference_us": sum(seconds) / len(seconds) if seconds else None,
            # --match-launches: the workers tried, and the kept one's later launch less the judge's
            "workers": len(kinds) or 1,
            "kind_difference_us": kinds[kept][1] - kinds[kept][0] if kinds else None,
            "setup_s": setup_s,
            "matching_s": matching_s,  # from the judge made to its last reading of a worker's kind
            "language": "HIP" if evaluation["label"].split("/")[1] in _HIP_CATEGORIES else "Triton",
            "foul_series": fouls,  # series timed again because the first was foul
            "intervals_held": (held, len(timed)),
            # the case whose side timed second read most unlike the first, %
            "second_side_pct": max(second_side, key=abs) if second_side else None,
            "verdict": (evaluation.get("errors") or [""])[0][:160] if evaluation.get("status") != "PASSED" else "",
        }
    return tasks


def summarize(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Over every task of every round: the counts within +-0.5% and +-1%, the tasks outside
    +-0.5% in any round with each round's reading, and the landing totals."""
    readings = [task["geomean"] for tasks in rounds for task in tasks.values() if task["geomean"]]
    labels = sorted({label for tasks in rounds for label in tasks})
    outside = {
        label: [tasks[label]["geomean"] if label in tasks else None for tasks in rounds]
        for label in labels
        if any(
            label in tasks and tasks[label]["geomean"] and abs(tasks[label]["geomean"] - 1) > 0.005 for tasks in rounds
        )
    }
    landing = [sum(task["landing"][i] for tasks in rounds for task in tasks.values()) for i in range(4)]
    paired = [
        (task["launch_difference_us"], math.log(task["geomean"]))
        for tasks in rounds
        for task in tasks.values()
        if task["geomean"] and task["launch_difference_us"] is not None
    ]
    return {
        "readings": len(readings),
        "within_0.5%": sum(abs(g - 1) <= 0.005 for g in readings),
        "within_1%": sum(abs(g - 1) <= 0.01 for g in readings),
        "geomean": math.exp(sum(map(math.log, readings)) / len(readings)) if readings else None,
        "not_passed": sorted(
            {label for tasks in rounds for label, task in tasks.items() if task["status"] != "PASSED"}
        ),
        "outside_0.5%": outside,
        "landing": {"judge": landing[:2], "worker": landing[2:]},
        "foul_series": sum(task["foul_series"] for tasks in rounds for task in tasks.values()),
        "intervals_holding_1.00": [
            sum(task["intervals_held"][i] for tasks in rounds for task in tasks.values()) for i in range(2)
        ],
        "second_side_over_2%": {
            label: [tasks[label]["second_side_pct"] if label in tasks else None for tasks in rounds]
            for label in labels
            if any(label in tasks and abs(tasks[label]["second_side_pct"] or 0) > 2 for tasks in rounds)
        },
        "not_passed_why": {
            label: task["verdict"] for tasks in rounds for label, task in tasks.items() if task["status"] != "PASSED"
        },
        "launch_difference_with_log_reading": _correlation(paired),
        "setup_s_median": _median([task["setup_s"] for tasks in rounds for task in tasks.values()]),
        "matching_s_median_by_workers": _matching_by_workers([t for tasks in rounds for t in tasks.values()]),
        "by_language": {
            language: {
                "setup_s_median": _median([t["setup_s"] for t in chosen]),
                "matching_s_median_by_workers": _matching_by_workers(chosen),
            }
            for language in ("HIP", "Triton")
            if (chosen := [t for tasks in rounds for t in tasks.values() if t["language"] == language])
        },
    }


def _matching_by_workers(tasks: list[dict[str, Any]]) -> dict[int, float | None]:
    """The matching's median seconds by workers tried (the evaluations that matched at all)."""
    tried = sorted({t["workers"] for t in tasks if t["matching_s"]})
    return {n: _median([t["matching_s"] for t in tasks if t["workers"] == n]) for n in tried}


def _median(values: list[Any]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(statistics.median(present), 2) if present else None


def _correlation(pairs: list[tuple[float, float]]) -> float | None:
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2 or len({y for _, y in pairs}) < 2:
        return None
    return round(statistics.correlation([x for x, _ in pairs], [y for _, y in pairs]), 3)


def report(paths: list[Path]) -> dict[str, Any]:
    rounds = [read_tasks(path) for path in paths]
    for label in sorted({label for tasks in rounds for label in tasks}):
        cells = []
        for tasks in rounds:
            task = tasks.get(label)
            if task is None or task["geomean"] is None:
                cells.append(f"{'-' if task is None else task['status']:>24}")
                continue
            judge, aimed, worker, worker_aimed = task["landing"]
            where = f" landed {judge}/{aimed} {worker}/{worker_aimed}" if aimed or worker_aimed else ""
            launch = task["launch_difference_us"]
            launch_text = "" if launch is None else f" launch {launch:+.2f}"
            if task["kind_difference_us"] is not None:
                launch_text += f" kind {task['kind_difference_us']:+.3f} ({task['workers']} workers)"
            cells.append(f"{task['geomean']:.4f} [{task['low']:.3f},{task['high']:.3f}]{launch_text}{where}")
        print(f"{label.split(':')[-1][:48]:48s} " + " | ".join(cells))
    summary = summarize(rounds)
    print(
        f"{summary['readings']} readings: {summary['within_0.5%']} within +-0.5%, {summary['within_1%']} within +-1%, "
        f"geomean {summary['geomean'] or float('nan'):.4f}; large outputs where aimed: judge "
        f"{summary['landing']['judge'][0]} of {summary['landing']['judge'][1]}, worker "
        f"{summary['landing']['worker'][0]} of {summary['landing']['worker'][1]}; the launch difference's "
        f"correlation with the log of the reading {summary['launch_difference_with_log_reading']}; series timed "
        f"again as foul: {summary['foul_series']}; timed cases whose 95% interval holds 1.00: "
        f"{summary['intervals_holding_1.00'][0]} of {summary['intervals_holding_1.00'][1]}"
    )
    for label, gains in summary["second_side_over_2%"].items():
        print(
            f"the side timed second read >2% faster: {label}: "
            + ", ".join(f"{g:+.2f}%" for g in gains if g is not None)
        )
    for label, why in summary["not_passed_why"].items():
        print(f"not PASSED: {label}: {why}")
    for language, part in [("all", summary), *summary["by_language"].items()]:
        by_workers = ", ".join(f"{n}: {s} s" for n, s in part["matching_s_median_by_workers"].items())
        matching = by_workers or "-"
        print(f"{language}: setup median {part['setup_s_median']} s; matching by workers tried, median: {matching}")
    return summary


def compare(arm_a: list[Path], arm_b: list[Path]) -> dict[str, Any]:
    """Each task's mean reading in both arms (their rounds' geometric mean) and, over the tasks
    both read, the count within +-0.5% and the mean |log reading| of each arm."""
    arms = [_mean_readings([read_tasks(path) for path in paths]) for paths in (arm_a, arm_b)]
    both = sorted(set(arms[0]) & set(arms[1]))
    for label in both:
        (a, rounds_a), (b, rounds_b) = arms[0][label], arms[1][label]
        print(f"{label.split(':')[-1][:48]:48s} A {a:.4f} ({rounds_a}) | B {b:.4f} ({rounds_b}) | B/A {b / a:.4f}")
    result: dict[str, Any] = {"tasks": len(both)}
    for name, arm in zip("AB", arms):
        result[f"{name}_within_0.5%"] = sum(abs(arm[label][0] - 1) <= 0.005 for label in both)
        result[f"{name}_mean_distance"] = (
            statistics.fmean(abs(math.log(arm[label][0])) for label in both) if both else None
        )
    print(json.dumps(result))
    return result


def _mean_readings(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, tuple[float, int]]:
    """label -> (the geometric mean of its rounds' readings, how many rounds read it)."""
    logs: dict[str, list[float]] = {}
    for tasks in rounds:
        for label, task in tasks.items():
            if task["geomean"]:
                logs.setdefault(label, []).append(math.log(task["geomean"]))
    return {label: (math.exp(statistics.fmean(values)), len(values)) for label, values in logs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("run", "summary", "compare"))
    parser.add_argument("files", nargs="*", type=Path, help="summary: suite JSON files, one a round; compare: arm A's")
    parser.add_argument("--vs", nargs="+", type=Path, default=[], help="compare: arm B's suite JSON files")
    parser.add_argument("--tasks", nargs="+", help="run: task folders (default: every one under tasks/)")
    parser.add_argument("--stop-after-s", type=float, default=540.0)
    parser.add_argument("--json", type=Path, help="run: the suite's file; summary: where to write the summary")
    parser.add_argument("--match-launches", type=int, help="run: the suite's --match-launches (default: its own)")
    parser.add_argument("--mirror-lent", action="store_true", help="run: the suite's --mirror-lent (mirror.py)")
    parser.add_argument(
        "--baseline-worker", action="store_true", help="run: the suite's --baseline-worker (baseline_apart.py)"
    )
    args = parser.parse_args()
    if args.part == "run":
        if args.json is None:
            parser.error("run needs --json FILE (the suite's, resumed)")
        flags = [
            flag
            for flag, on in (("--mirror-lent", args.mirror_lent), ("--baseline-worker", args.baseline_worker))
            if on
        ]
        code = run(args.json, args.tasks or task_folders(), args.stop_after_s, args.match_launches, flags)
        print(f"the suite exited {code}")
        report([args.json])
        return
    if not args.files:
        parser.error(f"{args.part} needs one suite JSON file at least")
    if args.part == "compare":
        if not args.vs:
            parser.error("compare needs --vs FILE ... (arm B)")
        compare(args.files, args.vs)
        return
    summary = report(args.files)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
