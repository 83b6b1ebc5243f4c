"""`arena suite --category C [--tasks ADDR...] [--exemplars | --submissions DIR] [--runner HOST:PORT] [--json FILE]`

Evaluates every task of a category: the baselines (no-ops: the instrument's own noise), the
exemplars, or an agent's submissions (DIR/<task name>/ laid out like the task folder). Every
candidate goes through a runner: the one at --runner (or ARENA_RUNNER) over gRPC, else a Runner
in this process (one lane per GPU, or one "cpu" lane; no gRPC) sharing the score cache with
`arena evaluate`, so a second run is answered from the cache. Prints a line per evaluation,
then the table and the suite's geomean and fast_p. Exits 0 when the suite ran, with or without
a GPU (it says what needed one).

A suite cut short loses nothing it finished: `--json FILE` is rewritten after every evaluation
(`"complete": false` until the last), and SIGINT or SIGTERM (timeout(1)'s signal) stop it, print
the table of what finished and exit 128 + the signal's number; a second signal ends it at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Generator, Iterator, Mapping

from arena.candidate.candidate import Candidate, baseline_candidate, exemplar_candidates, load_candidate
from arena.cli.evaluate import (
    add_json_flag,
    add_run_arguments,
    caller_error,
    open_store,
    refused_here,
    settings_from_args,
    write_json,
)
from arena.cli.suite_file import NotResumable, candidates_kind, kept_evaluations, suite_document, summary_of
from arena.environment.probe import probe_environment
from arena.errors import ArenaError, InvalidCandidate, JobFailed, UnknownTask
from arena.evaluation.evaluate import Store, evaluate, evaluate_directory
from arena.evaluation.evaluation import Evaluation, Status
from arena.executors.local import LocalExecutor
from arena.harness.settings import HarnessSettings
from arena.harness.version import harness_version
from arena.report.progress import Progress as LiveProgress
from arena.report.table import format_suite
from arena.runner.auth import Identity
from arena.runner.devices import discover_lanes, lane_cpus, parse_lanes
from arena.runner.records import Progress
from arena.runner.runner import Evaluate, Runner
from arena.task.load import load_tasks, parse_address
from arena.task.task import CATEGORIES, Task

HELP = "evaluate every task of a category (baselines, exemplars or submissions) and summarize"
# The client's variables, named again here: arena.client imports grpc, which the in-process path avoids.
RUNNER_VARIABLE = "ARENA_RUNNER"
TOKEN_VARIABLE = "ARENA_TOKEN"
OPERATOR = Identity("local", operator=True)  # the in-process runner's only caller: no attempts, no budgets
REMOTE_IN_FLIGHT = 16  # candidates sent to a remote runner at once; it queues them on its lanes
MIN_PENDING = 256
EXIT_NOT_SCORED = 1  # some evaluation failed in the runner (a harness fault): the suite is incomplete
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# submit(candidate, on_stage) -> wait(): queue it now; wait() returns its evaluation, telling
# on_stage each stage (queued, running, done) while it waits.
Submit = Callable[[Candidate, Callable[[str], None]], Callable[[], Evaluation]]


@dataclass(frozen=True)
class Request:
    """One candidate the suite evaluates."""

    label: str  # how the report names it: the task address, plus the exemplar folder
    task: Task
    candidate: Candidate | None  # None: refused before any runner sees it (see refused_evaluation)
    directory: Path | None = None  # the submission folder it was read from, if any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--category", choices=CATEGORIES, help="this category's tasks (or give --tasks)")
    parser.add_argument(
        "--tasks", nargs="+", metavar="ADDR", help="only these tasks (of --category; without it, of any category)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--exemplars", action="store_true", help="evaluate each task's exemplars")
    which.add_argument("--submissions", type=Path, metavar="DIR", help="DIR/<task name>/ holds each task's candidate")
    add_json_flag(parser, "every evaluation and the summary")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="with --json FILE: keep the evaluations FILE holds of the same candidates of unchanged tasks, measured "
        "by this harness in this environment (a suite cut short), and evaluate the rest",
    )
    parser.add_argument(
        "--runner",
        metavar="HOST:PORT",
        help=f"evaluate on the runner there, over gRPC, with its own settings and cache (default: {RUNNER_VARIABLE}; "
        "neither: a runner in this process, one lane per GPU, sharing the local score cache)",
    )
    parser.add_argument(
        "--token", metavar="TOKEN", help=f"an operator's bearer token for --runner (default: {TOKEN_VARIABLE})"
    )
    parser.add_argument(
        "--devices",
        metavar="all|0,1|cpu",
        help="the lanes of the runner in this process: every GPU (all, the default: ARENA_DEVICES or discovered), "
        "these GPUs, or the CPU interpreter; a --runner has its own",
    )
    add_run_arguments(parser)


def select_tasks(repo_root: Path, category: str | None, addresses: list[str] | None) -> list[Task]:
    """The category's tasks (all of them, or those of `addresses`), or with no category the tasks
    `addresses` name, in any category (a quick suite); an address no task has is UnknownTask."""
    tasks = [task for task in load_tasks(repo_root) if category is None or task.category.value == category]
    if not addresses:
        return tasks
    wanted = {":".join(parse_address(address)) for address in addresses}
    unknown = wanted - {task.address for task in tasks}
    if unknown:
        kind = f"{category} tasks" if category else "tasks"
        raise UnknownTask(f"not {kind}: {', '.join(sorted(unknown))}")
    return [task for task in tasks if task.address in wanted]


def suite_requests(tasks: list[Task], args: argparse.Namespace) -> list[Request]:
    """Every candidate the options name, in task order."""
    requests = []
    for task in tasks:
        if args.exemplars:
            for folder, candidate in exemplar_candidates(task, args.repo_root).items():
                requests.append(Request(f"{task.address} [{folder}]", task, candidate))
        elif args.submissions is not None:
            # One category: DIR/<task name>; a suite across categories: DIR/<category>/<task name>.
            directory: Path = args.submissions / (task.name if args.category else Path(task.category.value, task.name))
            try:
                requests.append(Request(task.address, task, load_candidate(task, directory), directory))
            except InvalidCandidate:  # no or a broken folder: a failing evaluation, not a crash
                requests.append(Request(task.address, task, None, directory))
        else:
            try:
                requests.append(Request(task.address, task, baseline_candidate(task, args.repo_root)))
            except InvalidCandidate:
                requests.append(Request(task.address, task, None))
    return requests


def refused_evaluation(request: Request, args: argparse.Namespace, remote: bool = False) -> Evaluation:
    """The INVALID_CANDIDATE evaluation of a candidate no runner would accept, as `arena evaluate`
    reports it; nothing runs (its files fail to load again). `remote`: the suite goes to a runner,
    so nothing probes this machine's measurement environment (a thin client has none)."""
    if remote:
        return refused_here(request.task, request.directory, args.repo_root)
    settings = settings_from_args(args, request.task)
    if request.directory is not None:
        return evaluate_directory(request.task, request.directory, args.repo_root, settings)
    return evaluate(request.task, None, args.repo_root, settings)


def evaluations(
    requests: list[Request], args: argparse.Namespace, progress: LiveProgress
) -> Generator[tuple[str, Evaluation | JobFailed], None, None]:
    """(label, evaluation) per request, in order; all are queued first so every lane keeps busy. A
    job the runner failed (a harness fault, after its retries) is (label, its error): nobody's
    score, and the suite goes on. `progress` hears which one is awaited and its stages."""
    if not requests:
        return
    address = args.runner or os.environ.get(RUNNER_VARIABLE, "")
    tasks = list({request.task.address: request.task for request in requests}.values())
    runner = remote_runner(address, args.token) if address else local_runner(tasks, len(requests), args)
    with runner as submit:
        waits = [
            submit(request.candidate, partial(progress.stage, request.label)) if request.candidate is not None else None
            for request in requests
        ]
        for request, wait in zip(requests, waits):
            if wait is None:
                yield request.label, refused_evaluation(request, args, remote=bool(address))
                continue
            progress.waiting(request.label)
            try:
                yield request.label, wait()
            except JobFailed as error:
                yield request.label, error


@contextmanager
def local_runner(tasks: list[Task], count: int, args: argparse.Namespace) -> Iterator[Submit]:
    """A Runner in this process: this machine's lanes, the shared score cache, no gRPC.

    Its job records live in a fresh folder per suite: a job's id names neither the task's digest
    nor the settings, so old records could answer for a changed task. The score cache, keyed by
    both, is what a later run reuses.
    """
    settings = {task.address: settings_from_args(args, task) for task in tasks}
    store = open_store(args.no_cache)
    lanes = discover_lanes() if args.devices in (None, "all") else parse_lanes(args.devices)  # checked in run()
    with tempfile.TemporaryDirectory(prefix="arena-suite-") as state:
        runner = Runner(
            args.repo_root,
            Path(state),
            evaluate=evaluate_with(settings),
            # Each lane keeps its next harness child started (a job does not wait for its imports),
            # on CPUs of its own (lanes do not slow each other's timing).
            executor=LocalExecutor(cpu_sets=lane_cpus(lanes)),
            settings=HarnessSettings(),  # only its device is used: the lane's (see evaluate_with)
            store=store,
            lanes=lanes,
            tasks=tuple(tasks),
            max_pending=max(MIN_PENDING, count),
            durable=False,
        ).start()
        try:
            yield lambda candidate, on_stage: follow(runner.evaluate(OPERATOR, "", candidate), store, on_stage)
        finally:
            runner.stop()


def evaluate_with(settings: Mapping[str, HarnessSettings]) -> Evaluate:
    """The runner's evaluate for the suite: each task's settings from the command line, on the lane's device."""

    def run(
        task: Task, candidate: Candidate, repo_root: Path, lane: HarnessSettings, store: Any, **options: Any
    ) -> Evaluation:
        chosen = replace(settings[task.address], device=lane.device)
        # The baseline's own files are the no-op: evaluated as None, exactly as `arena evaluate` does.
        no_op = candidate.files == baseline_files(task, repo_root)
        return evaluate(task, None if no_op else candidate, repo_root, chosen, store, **options)

    return run


def baseline_files(task: Task, repo_root: Path) -> Mapping[str, bytes]:
    """The task's editable files; none when it has none (evaluate reports that, not the lane)."""
    try:
        return baseline_candidate(task, repo_root).files
    except InvalidCandidate:
        return {}


def follow(
    progress: Iterator[Progress], store: Store | None, on_stage: Callable[[str], None] = lambda stage: None
) -> Callable[[], Evaluation]:
    """wait() -> the evaluation a job's progress ends with (a failed job raises its error); each
    step's stage goes to on_stage as it comes.

    The runner names it after its job; the id the score cache keeps it under (the one
    `arena reproduce` looks up) is put back.
    """

    def wait() -> Evaluation:
        for step in progress:
            on_stage(step.stage)
            evaluation = step.evaluation
            if evaluation is not None:
                kept = store.get(evaluation.cache_key) if store is not None and evaluation.cache_key else None
                return replace(evaluation, id=kept.id) if kept is not None else evaluation
        raise ArenaError("the runner ended the evaluation without a result")

    return wait


@contextmanager
def remote_runner(address: str, token: str | None) -> Iterator[Submit]:
    """The runner at `address`, over gRPC, as an operator (its own settings and cache apply)."""
    # Imported here: the client needs grpc and the generated arena.v1 modules (see leaderboard.py).
    from arena.client.client import Client

    with Client(address, token or os.environ.get(TOKEN_VARIABLE, "")) as client:
        with ThreadPoolExecutor(REMOTE_IN_FLIGHT, thread_name_prefix="arena-suite") as pool:
            yield (
                lambda candidate, on_stage: (
                    pool.submit(client.evaluate, candidate, "", lambda step: on_stage(step.stage)).result
                )
            )


def needs_gpu(evaluation: Evaluation, check_only: bool) -> bool:
    """True when a GPU would have told more: checking (NEEDS_DEVICE) or timing (correct, untimed);
    not when the task is for GPUs of another family than this one (Evaluation.for_another_gpu)."""
    untimed = evaluation.correct and not evaluation.score.speedup and not check_only
    return (evaluation.status is Status.NEEDS_DEVICE and not evaluation.for_another_gpu) or untimed


class Interrupted(Exception):
    """SIGINT or SIGTERM reached the suite (stopped_by_signals)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """The first SIGINT or SIGTERM raises Interrupted in the main thread, so the suite reports what
    it finished; the handlers before are back from then on, and a second signal acts as they do."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers live there alone
        yield
        return
    before = {number: signal.getsignal(number) for number in STOP_SIGNALS}

    def interrupt(signum: int, frame: object) -> None:
        for number, handler in before.items():
            signal.signal(number, handler)
        raise Interrupted(signum)

    for number in STOP_SIGNALS:
        signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def run(args: argparse.Namespace) -> int:
    refused = check_arguments(args)
    if refused is not None:
        return refused
    try:
        tasks = select_tasks(args.repo_root, args.category, args.tasks)
    except UnknownTask as error:
        return caller_error(str(error))
    # With JSON on stdout, the human report goes to stderr so the JSON stays parseable.
    report = sys.stderr if args.json == "-" else sys.stdout
    print(f"{len(tasks)} {args.category or 'named'} task(s)", file=report)
    for task in tasks:
        if task.skip:
            print(f"skipped {task.address}: {task.skip}", file=report)
    requests = suite_requests([task for task in tasks if not task.skip], args)
    try:
        kept = resumed(args, requests)
    except NotResumable as error:
        return caller_error(str(error))
    done = [(request.label, kept[request.label]) for request in requests if request.label in kept]
    for count, (label, evaluation) in enumerate(done, 1):
        print(f"[{count}] {label}  {result_line(evaluation)}  (kept from {args.json})", file=report)
    failed: list[tuple[str, str]] = []
    remaining = [request for request in requests if request.label not in kept]
    interrupted = run_requests(remaining, args, done, failed, report)
    order = {request.label: index for index, request in enumerate(requests)}
    done.sort(key=lambda item: order[item[0]])  # the suite's order, kept and new alike
    report_suite(args, done, failed, report)
    if interrupted is not None:
        print(
            f"\ninterrupted by {interrupted}: {len(done) + len(failed)} of {len(requests)} evaluation(s) finished; "
            "the table and the JSON hold those alone",
            file=report,
        )
    if args.json:
        write_json(args.json, document(args, done, failed, complete=interrupted is None))
    if interrupted is not None:
        return 128 + interrupted.signum
    return EXIT_NOT_SCORED if failed else 0


def resumed(args: argparse.Namespace, requests: list[Request]) -> dict[str, Evaluation]:
    """With --resume, the evaluations the suite's file already holds that answer for a request, by
    label (suite_file.kept_evaluations); NotResumable when the file is not a suite's of these."""
    if not args.resume:
        return {}
    wanted = {r.label: (r.task, r.candidate) for r in requests if r.candidate is not None}
    return kept_evaluations(
        Path(args.json),
        candidates_kind(args.exemplars, args.submissions),
        wanted,
        args.repo_root,
        harness_version(),
        probe_environment().fingerprint,
    )


def run_requests(
    requests: list[Request],
    args: argparse.Namespace,
    done: list[tuple[str, Evaluation]],
    failed: list[tuple[str, str]],
    report: Any,
) -> Interrupted | None:
    """Evaluate `requests`, each result into `done` or `failed` as it comes (and into the JSON file:
    what finished is kept should the suite be cut short); the signal that stopped it, if one did."""
    progress = LiveProgress(len(requests), report)  # the awaited task, its stage, an ETA
    try:
        with stopped_by_signals(), closing(evaluations(requests, args, progress)) as results:
            for label, evaluation in results:
                if isinstance(evaluation, JobFailed):
                    failed.append((label, str(evaluation)))
                    progress.print(f"[{len(done) + len(failed)}] {label}  FAILED, not scored: {evaluation}")
                else:
                    done.append((label, evaluation))
                    progress.print(f"[{len(done) + len(failed)}] {label}  {result_line(evaluation)}")
                if args.json and args.json != "-":
                    write_json(args.json, document(args, done, failed, complete=False))
    except Interrupted as signalled:
        return signalled
    finally:
        progress.close()
    return None


def document(
    args: argparse.Namespace, done: list[tuple[str, Evaluation]], failed: list[tuple[str, str]], complete: bool
) -> dict[str, Any]:
    return suite_document(args.category, candidates_kind(args.exemplars, args.submissions), done, failed, complete)


def check_arguments(args: argparse.Namespace) -> int | None:
    """The caller's error's exit code, or None when the command line holds together."""
    if args.category is None and not args.tasks:
        return caller_error("give --category, or --tasks naming the suite's tasks (of any category)")
    if args.submissions is not None and not args.submissions.is_dir():
        return caller_error(f"submissions folder {str(args.submissions)!r} does not exist or is not a folder")
    remote = bool(args.runner or os.environ.get(RUNNER_VARIABLE, ""))
    if args.resume and (not args.json or args.json == "-"):
        return caller_error("--resume needs --json FILE: the suite's file to resume from")
    if args.resume and remote:
        return caller_error(
            "--resume is for a runner in this process; a --runner answers what it scored from its cache"
        )
    if args.devices not in (None, "all"):
        if remote:
            return caller_error("--devices chooses the lanes of a runner in this process; a --runner has its own")
        try:
            parse_lanes(args.devices)
        except ValueError as error:
            return caller_error(f"--devices: {error}")
    return None


def result_line(evaluation: Evaluation) -> str:
    """An evaluation's line in the log: status, speedup, cached, and why a candidate failed (in the
    log too, for a suite run without --json)."""
    timed = evaluation.score.geomean_speedup
    speed = f"speedup {timed:.3f}" if timed else "untimed"
    cached = " (cached)" if evaluation.cached else ""
    failing = evaluation.errors and evaluation.status.value != "PASSED"
    why = f"  ({evaluation.errors[0][:300]})" if failing else ""
    return f"{evaluation.status.value}  {speed}{cached}{why}"


def report_suite(
    args: argparse.Namespace, done: list[tuple[str, Evaluation]], failed: list[tuple[str, str]], report: Any
) -> None:
    """The table, the geomean and fast_p, what needed a GPU and what the runner failed."""
    print("\n" + format_suite(done, summary_of(done)), file=report)
    waiting = [label for label, evaluation in done if needs_gpu(evaluation, args.check_only)]
    if waiting:
        print(
            f"\n{len(waiting)} of {len(done)} evaluation(s) need a GPU to be checked or timed "
            f"(run on a GPU machine for speedups): {', '.join(waiting)}",
            file=report,
        )
    elsewhere = [label for label, evaluation in done if evaluation.for_another_gpu]
    if elsewhere:
        print(
            f"\n{len(elsewhere)} of {len(done)} evaluation(s) are of tasks declared for other GPUs than this "
            f"one (their archs; unchecked, run them there): {', '.join(elsewhere)}",
            file=report,
        )
    if failed:
        print(
            f"\n{len(failed)} evaluation(s) failed in the runner and were not scored: "
            f"{', '.join(label for label, _ in failed)}",
            file=report,
        )
