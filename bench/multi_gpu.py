"""Does evaluation throughput scale with GPUs, and do timings hold while every GPU is busy?

    PYTHONPATH=src/python python3 bench/multi_gpu.py --category triton2triton --out multi_gpu.json
    PYTHONPATH=src/python python3 bench/multi_gpu.py --cpu-dry-run --out dry.json
    PYTHONPATH=src/python python3 bench/multi_gpu.py --report-from multi_gpu.json   (a saved run, again)
    PYTHONPATH=src/python python3 bench/multi_gpu.py --summarize OUT --work DIR   (bench/device_check.sh)

Every task of the category is evaluated as a no-op (its baseline as the candidate) through the
runner's own queue (arena.runner.runner.Runner, one worker lane per GPU, the local executor with
each lane on CPUs of its own unless ARENA_LANE_CPUS=off, a
fresh non-durable state and a fresh score cache per run, so nothing is served from a cache):
first on GPU 0 alone, then on every GPU at once, both runs with one secret seed (the same hidden
inputs; --fresh-seeds draws new ones per evaluation), each after its lanes had 6 s to start their
first harness child (a serving runner's lanes are warm). Reported: the wall time of each run, the
throughput ratio (target >= 0.9 x GPUs), and per task and timed case whether the baseline median
measured while every GPU was busy agrees with the one measured alone on the same GPU: their
bootstrap 95% intervals overlap, or they differ by less than the larger of the two evaluations'
noise floors. With --copies > 1 the copies measured alone also give a control: how far two
evaluations of one job differ with no neighbour at all. Pairs on two different GPUs are listed
but not judged (two chips differ by themselves).

Without a GPU it says so, checks the plumbing with the CPU interpreter (two "cpu" lanes,
check-only, one small Triton task submitted twice) and exits 0 when that works.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import baseline_candidate
from arena.errors import ArenaError
from arena.evaluation.evaluate import evaluate
from arena.evaluation.evaluation import Evaluation
from arena.executors.local import LocalExecutor
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.devices import CPU_LANE, lane_cpus
from arena.runner.runner import Runner
from arena.task.load import TASKS_FOLDER, find_repo_root, load_task, read_build_file
from arena.task.task import Task

TARGET_EFFICIENCY = 0.9  # throughput on N GPUs >= 0.9 x N x throughput on one
DRY_RUN_TASK = "tasks/triton2triton/silu_and_mul:silu_and_mul"
SUITE_FILES = ("exemplars", "noop")  # device_check.sh writes <kind>-<category>.json into --work
KERNELS_JSON = "timing-kernels.json"  # device_check.sh's kernel part, when a third GPU runs it
LANE_WARM_S = 6.0  # after the runner starts, before the first job (not counted in the wall time)


@dataclass(frozen=True)
class JobRecord:
    """One evaluation the runner ran: where, when (seconds from the run's start) and its outcome."""

    task: str
    copy: int  # which submission of the task (0 unless --copies > 1)
    lane: str = ""  # the lane (GPU index, or "cpu") that ran it
    started_s: float = 0.0
    finished_s: float = 0.0
    evaluation: dict[str, Any] | None = None  # Evaluation.to_dict(); None when the job failed or timed out
    error: str = ""


@dataclass(frozen=True)
class RunRecord:
    """One run of the whole task list on a set of lanes."""

    lanes: tuple[str, ...]
    wall_s: float  # first enqueue to last evaluation done
    complete: bool  # every job finished before the deadline
    jobs: tuple[JobRecord, ...] = field(default_factory=tuple)

    def evaluations_per_minute(self) -> float:
        done = sum(1 for job in self.jobs if job.evaluation is not None)
        return 60.0 * done / self.wall_s if self.wall_s > 0 else 0.0


class LaneRecorder:
    """Wraps evaluate() to note which lane ran each job and when (the runner calls it once per job)."""

    def __init__(self) -> None:
        self.origin = time.perf_counter()  # time zero of the run; reset when the first job is submitted
        self._lock = threading.Lock()
        self._calls: dict[tuple[str, str], list[tuple[float, float, str]]] = {}  # -> (start, end, lane)

    def wrap(self, cpu: bool) -> Callable[..., Evaluation]:
        def recorded(task, candidate, repo_root, settings, store, **options):  # type: ignore[no-untyped-def]
            begin = time.perf_counter() - self.origin
            evaluation = evaluate(task, candidate, repo_root, settings, store, **options)
            end = time.perf_counter() - self.origin
            lane = CPU_LANE if cpu else str(settings.device)
            with self._lock:
                self._calls.setdefault((task.address, candidate.digest), []).append((begin, end, lane))
            return evaluation

        return recorded

    def call(self, task: str, digest: str, copy: int) -> tuple[float, float, str]:
        """The copy-th evaluation of this candidate to start (jobs start in submission order)."""
        with self._lock:
            calls = sorted(self._calls.get((task, digest), []))
        return calls[copy] if copy < len(calls) else (0.0, 0.0, "")


def run_once(
    repo_root: Path,
    tasks: list[Task],
    lanes: tuple[str, ...],
    settings: HarnessSettings,
    copies: int,
    deadline: float,
) -> RunRecord:
    """Every task (x copies) through a fresh runner on `lanes`; waits until done or `deadline` (monotonic)."""
    with tempfile.TemporaryDirectory(prefix="arena-multi-gpu-") as state:
        recorder = LaneRecorder()
        # Copies of one candidate share a cache key: with copies the cache is off, else it is fresh.
        store = SqliteStore(Path(state) / "scores.sqlite") if copies == 1 else None
        runner = Runner(
            repo_root,
            Path(state),
            evaluate=recorder.wrap(cpu=lanes[0] == CPU_LANE),
            settings=settings,
            store=store,
            lanes=lanes,
            tasks=tuple(tasks),
            durable=False,
            executor=LocalExecutor(
                cpu_sets=lane_cpus(lanes)
            ),  # each GPU lane on CPUs of its own, as serve and suite run
        ).start()
        # A serving runner's lanes have their first harness child ready long before jobs come;
        # give them that, so neither run is charged one cold start per lane.
        time.sleep(LANE_WARM_S)
        origin = recorder.origin = time.perf_counter()
        submitted = []
        try:
            for copy in range(copies):
                # Distinct agents make distinct jobs of the same candidate (a job id hashes the agent).
                identity = Identity(agent=f"bench-{copy}", operator=True)
                for task in tasks:
                    candidate = baseline_candidate(task, repo_root)
                    # is_active: following stops at the deadline (the job itself runs on).
                    stream = runner.evaluate(identity, "", candidate, is_active=lambda: time.monotonic() < deadline)
                    submitted.append((task, copy, candidate, stream))
            jobs, complete = [], True
            for task, copy, candidate, stream in submitted:
                evaluation, error = follow(stream)
                complete = complete and (evaluation is not None or bool(error and "deadline" not in error))
                begin, end, lane = recorder.call(task.address, candidate.digest, copy)
                jobs.append(
                    JobRecord(
                        task=task.address,
                        copy=copy,
                        lane=lane,
                        started_s=round(begin, 3),
                        finished_s=round(end, 3),
                        evaluation=evaluation.to_dict() if evaluation is not None else None,
                        error=error,
                    )
                )
            finished = [job.finished_s for job in jobs if job.evaluation is not None]
            wall = max(finished) if finished else time.perf_counter() - origin
        finally:
            runner.stop(timeout_s=2.0)
    return RunRecord(lanes=lanes, wall_s=round(wall, 3), complete=complete, jobs=tuple(jobs))


def follow(stream: Any) -> tuple[Evaluation | None, str]:
    """The job's evaluation once done, or why not (its error, or the deadline ended the stream)."""
    try:
        for progress in stream:
            if progress.evaluation is not None:
                return progress.evaluation, ""
    except ArenaError as error:
        return None, f"{type(error).__name__}: {error}"
    return None, "deadline passed before the job finished"


def timed_baselines(job: JobRecord) -> dict[str, dict[str, Any]]:
    """Declared timed cases of a job's evaluation -> the baseline's timing and the no-op verdict."""
    if job.evaluation is None:
        return {}
    floor = float(job.evaluation["score"]["noise_floor"])
    out = {}
    for case in job.evaluation["cases"]:
        if case["timed"] and not case["hidden"] and case["baseline"]:
            out[case["name"]] = dict(
                case["baseline"],
                noise_floor=floor,
                noop_speedup=case["speedup"],
                noop_within_noise=case["within_noise"],
            )
    return out


def compare_runs(alone: RunRecord, busy: RunRecord) -> list[dict[str, Any]]:
    """Per task and timed case: the baseline median alone against the one with every GPU busy.
    `same_gpu` rows pair runs on one chip (a neighbour's effect); the rest compare two chips."""
    rows = []
    alone_jobs = {(job.task, job.copy): job for job in alone.jobs}
    for other in busy.jobs:
        job = alone_jobs.get((other.task, other.copy))
        if job is None:
            continue
        mine, theirs = timed_baselines(job), timed_baselines(other)
        for case in sorted(set(mine) & set(theirs)):
            a, b = mine[case], theirs[case]
            relative = b["median_us"] / a["median_us"] - 1.0 if a["median_us"] > 0 else float("nan")
            floor = max(a["noise_floor"], b["noise_floor"])
            overlap = a["ci_low_us"] <= b["ci_high_us"] and b["ci_low_us"] <= a["ci_high_us"]
            rows.append(
                dict(
                    task=job.task,
                    copy=job.copy,
                    case=case,
                    lane_alone=job.lane,
                    lane_busy=other.lane,
                    same_gpu=job.lane == other.lane,
                    alone=a,
                    busy=b,
                    relative_difference=relative,
                    noise_floor=floor,
                    intervals_overlap=overlap,
                    agree=overlap or abs(relative) <= floor,
                )
            )
    return rows


def idle_spread(alone: RunRecord) -> dict[tuple[str, str], float]:
    """Per (task, case): the largest relative difference between two copies of the same job
    measured alone (same GPU, same inputs, no neighbour): how far two evaluations differ anyway."""
    medians: dict[tuple[str, str], list[float]] = {}
    for job in alone.jobs:
        for case, timing in timed_baselines(job).items():
            medians.setdefault((job.task, case), []).append(timing["median_us"])
    return {key: max(values) / min(values) - 1.0 for key, values in medians.items() if len(values) > 1}


def report_runs(alone: RunRecord, busy: RunRecord, gpus: int) -> dict[str, Any]:
    ratio = alone.wall_s / busy.wall_s if busy.wall_s > 0 else 0.0
    rows = compare_runs(alone, busy)
    spread = idle_spread(alone)
    for row in rows:
        row["idle_spread"] = spread.get((row["task"], row["case"]))
        # The control: a neighbour's effect is one that exceeds what two idle evaluations differ by.
        row["within_idle_spread"] = row["agree"] or (
            row["idle_spread"] is not None and abs(row["relative_difference"]) <= row["idle_spread"]
        )
    cached = sum(1 for run in (alone, busy) for job in run.jobs if job.evaluation and job.evaluation["cached"])
    return {
        "gpus": gpus,
        "wall_s": {"one_gpu": alone.wall_s, "all_gpus": busy.wall_s},
        "evaluations_per_minute": {
            "one_gpu": round(alone.evaluations_per_minute(), 2),
            "all_gpus": round(busy.evaluations_per_minute(), 2),
        },
        "throughput_ratio": round(ratio, 3),
        "target_ratio": round(TARGET_EFFICIENCY * gpus, 3),
        "meets_target": alone.complete and busy.complete and ratio >= TARGET_EFFICIENCY * gpus,
        "complete": alone.complete and busy.complete,
        "served_from_cache": cached,
        # A busy neighbour's effect shows only where both sides ran on the same chip; pairs on two
        # chips also carry the chips' own difference (clocks, binning), reported but not judged.
        "cases_compared": sum(1 for row in rows if row["same_gpu"]),
        "cases_agreeing": sum(1 for row in rows if row["same_gpu"] and row["agree"]),
        "cases_within_idle_spread": sum(1 for row in rows if row["same_gpu"] and row["within_idle_spread"]),
        "cross_gpu_compared": sum(1 for row in rows if not row["same_gpu"]),
        "cross_gpu_agreeing": sum(1 for row in rows if not row["same_gpu"] and row["agree"]),
        "cases": rows,
        "lane_use": {"one_gpu": lane_use(alone), "all_gpus": lane_use(busy)},
    }


def lane_use(run: RunRecord) -> dict[str, dict[str, float]]:
    """Per lane: jobs and busy seconds (a lane idle while others work is lost throughput)."""
    use: dict[str, dict[str, float]] = {}
    for job in run.jobs:
        entry = use.setdefault(job.lane or "?", {"jobs": 0, "busy_s": 0.0})
        entry["jobs"] += 1
        entry["busy_s"] = round(entry["busy_s"] + job.finished_s - job.started_s, 3)
    return use


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"GPUs {report['gpus']}: wall {report['wall_s']['one_gpu']:.1f} s on one, "
        f"{report['wall_s']['all_gpus']:.1f} s on all; throughput ratio {report['throughput_ratio']:.2f} "
        f"(target >= {report['target_ratio']:.2f}: {'met' if report['meets_target'] else 'NOT met'}); "
        f"complete {report['complete']}, served from cache {report['served_from_cache']}",
        f"baseline medians agreeing alone vs all busy, same GPU: {report['cases_agreeing']} of "
        f"{report['cases_compared']}; on two different GPUs (chip difference included, not judged): "
        f"{report.get('cross_gpu_agreeing')} of {report.get('cross_gpu_compared')}",
        f"same GPU, within the floor or the spread of idle copies (the control): "
        f"{report.get('cases_within_idle_spread')} of {report['cases_compared']}",
        "",
        "| task | case | lane alone / busy | alone median us [95% CI] | busy median us [95% CI]"
        " | diff | floor | idle spread | agree |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["cases"]:
        a, b = row["alone"], row["busy"]
        spread = "-" if row.get("idle_spread") is None else f"{100 * row['idle_spread']:.2f}%"
        lines.append(
            f"| {row['task'].split(':')[0].removeprefix('tasks/')} | {row['case']} "
            f"| {row['lane_alone']} / {row['lane_busy']} "
            f"| {a['median_us']:.2f} [{a['ci_low_us']:.2f}, {a['ci_high_us']:.2f}] "
            f"| {b['median_us']:.2f} [{b['ci_low_us']:.2f}, {b['ci_high_us']:.2f}] "
            f"| {100 * row['relative_difference']:+.2f}% | {100 * row['noise_floor']:.2f}% | {spread} "
            f"| {'yes' if row['agree'] else 'NO'} |"
        )
    return "\n".join(lines)


def count_gpus() -> int:
    try:
        import torch  # only this bench's parent asks; the harness children import their own
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def select_category(repo_root: Path, category: str, addresses: list[str] | None) -> list[Task]:
    # Only this category's BUILD files: a broken declaration elsewhere must not stop the bench.
    folder = repo_root.resolve() / TASKS_FOLDER / category
    found = [task for build in sorted(folder.rglob("BUILD")) for task in read_build_file(build, repo_root.resolve())]
    tasks = sorted((task for task in found if task.category.value == category), key=lambda task: task.address)
    if addresses:
        wanted = {address.split(":")[0].rstrip("/") for address in addresses}
        tasks = [task for task in tasks if task.address.split(":")[0] in wanted]
    if not tasks:
        raise SystemExit(f"no {category} tasks selected")
    return tasks


def dry_run(repo_root: Path, deadline_s: float) -> dict[str, Any]:
    """The same code path on two "cpu" lanes: one small Triton task, check-only, submitted twice."""
    task = load_task(repo_root, DRY_RUN_TASK)
    small = tuple(case.name for case in task.cases if not case.timed)
    settings = HarnessSettings(timeout_s=120, check_only=True, backend="cpu", cases=small)
    deadline = time.monotonic() + deadline_s
    alone = run_once(repo_root, [task], (CPU_LANE,), settings, copies=2, deadline=deadline)
    busy = run_once(repo_root, [task], (CPU_LANE, CPU_LANE), settings, copies=2, deadline=deadline)
    statuses = [job.evaluation["status"] if job.evaluation else job.error for run in (alone, busy) for job in run.jobs]
    ok = alone.complete and busy.complete and all(status == "PASSED" for status in statuses)
    overlapped = overlap_s(busy)
    return {
        "task": task.address,
        "cases": list(small),
        "statuses": statuses,
        "wall_s": {"one_lane": alone.wall_s, "two_lanes": busy.wall_s},
        "two_lanes_overlap_s": overlapped,
        "ok": ok,
        "runs": {"one_lane": asdict(alone), "two_lanes": asdict(busy)},
    }


def overlap_s(run: RunRecord) -> float:
    """Seconds during which two jobs of the run were evaluating at once (proof the lanes ran in parallel)."""
    spans = sorted((job.started_s, job.finished_s) for job in run.jobs if job.evaluation is not None)
    total = 0.0
    for (_, end_a), (start_b, end_b) in zip(spans, spans[1:]):
        total += max(0.0, min(end_a, end_b) - start_b)
    return round(total, 3)


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, default=str) + "\n")


def measure(args: argparse.Namespace, repo_root: Path) -> int:
    started = time.monotonic()
    document: dict[str, Any] = {"category": args.category, "created_unix_s": int(time.time())}
    gpus = count_gpus()
    document["gpus"] = gpus
    if gpus == 0 or args.cpu_dry_run:
        if gpus == 0:
            print(
                "multi_gpu: this bench needs GPUs (torch sees none); checking the plumbing on CPU instead", flush=True
            )
        document["skipped"] = "no GPU" if gpus == 0 else "--cpu-dry-run"
        document["dry_run"] = dry_run(repo_root, args.deadline_s)
        write_json(args.out, document)
        dry = document["dry_run"]
        print(
            f"dry run on lanes cpu x2: {'ok' if dry['ok'] else 'FAILED'}; statuses {dry['statuses']}; "
            f"wall {dry['wall_s']}; two lanes overlapped {dry['two_lanes_overlap_s']} s",
            flush=True,
        )
        return 0 if dry["ok"] else 1
    tasks = select_category(repo_root, args.category, args.tasks)
    # One secret seed for both runs: the same hidden inputs alone and busy, so a difference in a
    # case's time is the neighbours', not the data's (a histogram's time depends on its values).
    settings = HarnessSettings(
        timeout_s=args.timeout, budget_s_per_case=args.budget, secret_seed=None if args.fresh_seeds else args.seed
    )
    document["settings"] = asdict(settings)
    document["tasks"] = [task.address for task in tasks]
    document["copies"] = args.copies
    all_lanes = tuple(str(index) for index in range(gpus))
    # Half of what is left for the single-GPU run would leave the rest too little; 60% of the budget.
    alone = run_once(repo_root, tasks, ("0",), settings, args.copies, started + 0.6 * args.deadline_s)
    document["runs"] = {"one_gpu": asdict(alone)}
    write_json(args.out, document)  # kept if the next run is cut short
    print(f"one GPU: {alone.wall_s:.1f} s, complete {alone.complete}", flush=True)
    busy = run_once(repo_root, tasks, all_lanes, settings, args.copies, started + args.deadline_s)
    document["runs"]["all_gpus"] = asdict(busy)
    report = report_runs(alone, busy, gpus)
    document["report"] = report
    document["failures"] = [
        {
            "lanes": run.lanes,
            "task": job.task,
            "error": job.error if job.evaluation is None else job.error or job.evaluation["status"],
        }
        for run in (alone, busy)
        for job in run.jobs
        if job.evaluation is None or job.evaluation["status"] != "PASSED"
    ]
    write_json(args.out, document)
    print(format_report(report), flush=True)
    if document["failures"]:
        print(f"not passed: {document['failures']}", flush=True)
    return 0


# --- bench/device_check.sh's summary: only a few files come back from the GPU machine --------------

LOG_KEEP = 2000  # characters kept of each stage log in suites.json


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def trimmed_suite(document: dict[str, Any]) -> dict[str, Any]:
    for evaluation in document.get("evaluations", ()):
        for stage in evaluation.get("stages", ()):
            stage["log"] = stage.get("log", "")[-LOG_KEEP:]
    return document


def summarize_suites(work: Path) -> tuple[dict[str, Any], list[str]]:
    """Every suite JSON in `work`, combined, and its lines for the summary."""
    combined: dict[str, Any] = {}
    lines = [
        "## Suites",
        "",
        "| run | tasks | correct | timed | geomean | fast_1.0 | evaluations (status, geomean speedup, noise floor) |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in sorted(work.glob("*.json")):
        if not path.stem.startswith(SUITE_FILES):
            continue
        document = read_json(path)
        if document is None:
            combined[path.stem] = {"error": "unreadable or missing"}
            lines.append(f"| {path.stem} | unreadable | | | | | |")
            continue
        combined[path.stem] = trimmed_suite(document)
        summary = document.get("summary", {})
        shown = "; ".join(
            f"{e.get('label', e['task']).removeprefix('tasks/')} {e['status']} {e['score']['geomean_speedup']:.3f} "
            f"(floor {100 * e['score']['noise_floor']:.2f}%)"
            for e in document.get("evaluations", ())
        )
        geomean = summary.get("geomean_speedup")
        lines.append(
            f"| {path.stem} | {summary.get('tasks')} | {summary.get('correct')} | {summary.get('timed')} "
            f"| {geomean if geomean is None else f'{geomean:.3f}'} | {summary.get('fast_p', {}).get('1.0')} | {shown} |"
        )
    return combined, lines


def summarize_timing(document: dict[str, Any] | None, name: str = "timing.json") -> list[str]:
    if document is None:
        missing = f"no {name} (the step failed or was cut short: see device_check.log)"
        return [f"## Timing precision ({name})", "", missing]
    lines = [
        f"## Timing precision ({name})",
        "",
        f"{document.get('gpu')}, torch {document.get('torch')}, triton {document.get('triton')}; "
        f"empty event pair after a flush {document.get('event_overhead_us')} us",
        "",
        "| kernel | method | median us (CV over repeats) | no-op ratio mean [range] (CV) | 2x ratio |",
        "|---|---|---|---|---|",
    ]
    for name, entry in document.get("kernels", {}).items():
        ratios = entry.get("ratio_2x", {})
        for method, value in entry.items():
            if not isinstance(value, dict) or "cv" not in value or "_2x_" in method:
                continue
            noop = ""
            if "ratio_b_over_a" in value:
                low, high = min(value["ratio_b_over_a"]), max(value["ratio_b_over_a"])
                noop = f"{value['ratio_mean']:.4f} [{low:.4f}, {high:.4f}] ({100 * value['ratio_cv']:.3f}%)"
            key = method.removeprefix("harness_noop_")
            twice = ratios.get(key)
            lines.append(
                f"| {name} | {method} | {value['median_us']:.2f} ({100 * value['cv']:.3f}%) | {noop} "
                f"| {'' if twice is None else f'{twice:.3f}'} |"
            )
    for index, run in enumerate(document.get("profiler", {}).get("runs", ())):
        lines.append(f"- profiled call {index + 1} in one process: {run['total_s']:.3f} s; marks {run['marks']}")
    for run in document.get("evaluation", {}).get("runs", ()):
        lines.append(
            f"- whole evaluation ({run.get('kind')}): {run['status']}, speedup {run.get('speedup')}, "
            f"wall {run['wall_s']:.2f} s, stages "
            f"{ {k: round(v, 2) for k, v in run['stages_s'].items()} }, beyond compile + time {run['overhead_s']:.2f} s"
        )
    return lines


def summarize_multi_gpu(document: dict[str, Any] | None) -> list[str]:
    lines = ["## Multi-GPU", ""]
    if document is None:
        return lines + ["no multi_gpu.json (the step failed or was cut short: see device_check.log)"]
    if "report" in document:
        lines.append(format_report(document["report"]))
        failures = document.get("failures") or []
        lines.append(f"\nnot passed: {failures}" if failures else "\nevery evaluation PASSED")
    elif "dry_run" in document:
        dry = document["dry_run"]
        lines.append(f"skipped ({document.get('skipped')}); CPU dry run ok={dry['ok']}, statuses {dry['statuses']}")
    else:
        lines.append(f"incomplete: runs {list(document.get('runs', {}))} (cut short?)")
    return lines


def summarize(out: Path, work: Path) -> int:
    """OUT/suites.json (every suite JSON in `work`, combined) and OUT/summary.md (the key numbers)."""
    combined, suite_lines = summarize_suites(work)
    write_json(out / "suites.json", combined)
    steps = ["## Steps (exit code, seconds; 124/137: cut by timeout)", "", "| step | rc | s |", "|---|---|---|"]
    steps_file = work / "steps.tsv"
    for line in steps_file.read_text().splitlines() if steps_file.is_file() else ():
        steps.append("| " + " | ".join(line.split("\t")) + " |")
    environment = (out / "env.txt").read_text() if (out / "env.txt").is_file() else "(no env.txt)"
    sections = [
        ["# Device check summary", "", "```", environment.strip(), "```"],
        steps,
        summarize_timing(read_json(out / "timing.json")),
        *([summarize_timing(read_json(out / KERNELS_JSON), KERNELS_JSON)] if (out / KERNELS_JSON).is_file() else []),
        suite_lines,
        summarize_multi_gpu(read_json(out / "multi_gpu.json")),
    ]
    (out / "summary.md").write_text("\n\n".join("\n".join(section) for section in sections) + "\n")
    print((out / "summary.md").read_text())
    return 0


def run_from_json(raw: dict[str, Any]) -> RunRecord:
    jobs = tuple(JobRecord(**job) for job in raw["jobs"])
    return RunRecord(lanes=tuple(raw["lanes"]), wall_s=raw["wall_s"], complete=raw["complete"], jobs=jobs)


def report_from(path: Path) -> int:
    """Print the report of a saved multi_gpu.json again, with this version's comparisons."""
    document = json.loads(path.read_text())
    runs = document["runs"]
    report = report_runs(run_from_json(runs["one_gpu"]), run_from_json(runs["all_gpus"]), document["gpus"])
    print(format_report(report), flush=True)
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", default="triton2triton")
    parser.add_argument("--tasks", nargs="+", metavar="ADDR", help="only these tasks of the category")
    parser.add_argument("--out", type=Path, default=Path("multi_gpu.json"))
    parser.add_argument("--copies", type=int, default=1, help="submit every task this many times (cache off if > 1)")
    parser.add_argument("--budget", type=float, default=HarnessSettings.budget_s_per_case, help="per timed case, s")
    parser.add_argument("--timeout", type=float, default=120.0, help="per evaluation, s")
    parser.add_argument("--deadline-s", type=float, default=185.0, help="the whole bench, s (both runs)")
    parser.add_argument("--seed", type=int, default=20261129, help="the secret seed both runs share")
    parser.add_argument("--fresh-seeds", action="store_true", help="draw a new secret seed per evaluation")
    parser.add_argument("--cpu-dry-run", action="store_true", help="check the plumbing on two cpu lanes")
    parser.add_argument("--report-from", type=Path, metavar="JSON", help="recompute the report of a saved run")
    parser.add_argument("--summarize", type=Path, metavar="OUT", help="write OUT/summary.md and OUT/suites.json")
    parser.add_argument("--work", type=Path, help="with --summarize: the folder of suite JSONs and steps.tsv")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.summarize is not None:
        return summarize(args.summarize, args.work or args.summarize)
    if args.report_from is not None:
        return report_from(args.report_from)
    # timeout(1) sends SIGTERM: turn it into an exception so partial results are still written.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return measure(args, find_repo_root(Path(__file__).resolve().parent))


if __name__ == "__main__":
    sys.exit(main())
