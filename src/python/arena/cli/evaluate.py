"""`arena evaluate --task ADDR [--candidate DIR] [--json FILE|-] [--no-cache] [--check-only] ...`

Evaluates one candidate (default: the baseline itself, a no-op) and prints a short report.
Exit 0 whenever the evaluation ran, even if the candidate failed; 2 for a caller's mistake.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
from pathlib import Path

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import baseline_candidate, load_candidate
from arena.cli.remote import add_runner_arguments, open_client, runner_address
from arena.environment.probe import probe_environment, probe_host
from arena.errors import InvalidCandidate, UnknownTask
from arena.evaluation.evaluate import evaluate, evaluate_directory, settings_for_machine
from arena.evaluation.evaluation import Evaluation
from arena.harness.settings import BACKENDS, MAX_MATCH_LAUNCHES, WARM_INPUTS, HarnessSettings
from arena.report.table import format_evaluation
from arena.runner.folders import score_cache_folder
from arena.task.load import load_task
from arena.task.task import Task

HELP = "evaluate a candidate on a task: compile, check, time, score"
EXIT_CALLER_ERROR = 2
STORE_NAME = "scores.sqlite"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Options every evaluating command shares."""
    parser.add_argument("--check-only", action="store_true", help="compile and check; never time")
    parser.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="wall-clock limit of one evaluation in seconds "
        f"(default: the task's timeout, else {HarnessSettings.timeout_s:g})",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    parser.add_argument(
        "--budget-s-per-case",
        type=float,
        default=HarnessSettings.budget_s_per_case,
        metavar="S",
        help="timing budget of one case, for baseline and candidate together",
    )
    parser.add_argument("--trials", type=int, default=HarnessSettings.trials, help="interleaved A/B trials per case")
    parser.add_argument(
        "--warm-inputs",
        choices=WARM_INPUTS,
        default=HarnessSettings.warm_inputs,
        help="small: calls whose inputs and outputs fit in a quarter of the last-level cache get their "
        "inputs read back after the flush; never: every call starts from a flushed cache",
    )
    parser.add_argument(
        "--match-launches",
        type=int,
        choices=range(MAX_MATCH_LAUNCHES + 1),
        default=HarnessSettings.match_launches,
        metavar="N",
        help="before the candidate loads, start up to N fresh workers until one's cost of a later kernel "
        "launch is the judge's kind (processes differ by about 0.15 us a launch; 0: never; default %(default)s)",
    )
    parser.add_argument(
        "--mirror-lent",
        action="store_true",
        help="an experiment: the judge maps a block its worker allocates, as the worker maps the judge's",
    )
    parser.add_argument(
        "--baseline-worker",
        action="store_true",
        help="an experiment: the baseline timed in a worker of its own, as the candidate is, not in the judge",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", required=True, metavar="ADDR", help="task address, e.g. tasks/triton2triton/softmax")
    parser.add_argument(
        "--candidate",
        type=Path,
        metavar="DIR",
        help="folder laid out like the task folder (default: the baseline, a no-op)",
    )
    add_json_flag(parser, "the evaluation")
    add_run_arguments(parser)
    add_runner_arguments(parser)


def open_store(disabled: bool = False) -> SqliteStore | None:
    """The score cache: $ARENA_CACHE_DIR/scores.sqlite, else $XDG_CACHE_HOME/arena/scores.sqlite
    (~/.cache/arena: arena.runner.folders), shared by every checkout on this machine."""
    if disabled:
        return None
    return SqliteStore(score_cache_folder() / STORE_NAME)


def settings_from_args(args: argparse.Namespace, task: Task) -> HarnessSettings:
    """The run's settings; without a GPU only the small, non-timed cases are checked."""
    settings = HarnessSettings(
        timeout_s=task_timeout_s(task, args.timeout),
        check_only=args.check_only,
        backend=args.backend,
        # validate-task shares this function but not the timing options.
        budget_s_per_case=getattr(args, "budget_s_per_case", HarnessSettings.budget_s_per_case),
        trials=getattr(args, "trials", HarnessSettings.trials),
        warm_inputs=getattr(args, "warm_inputs", HarnessSettings.warm_inputs),
        match_launches=getattr(args, "match_launches", HarnessSettings.match_launches),
        mirror_lent=getattr(args, "mirror_lent", HarnessSettings.mirror_lent),
        baseline_worker=getattr(args, "baseline_worker", HarnessSettings.baseline_worker),
    )
    return settings_for_machine(task, settings, probe_environment())


def task_timeout_s(task: Task, requested: float | None) -> float:
    """The harness timeout of `task`'s evaluations: the one asked for, else the task's, else the default."""
    if requested is not None:
        return requested
    return task.timeout if task.timeout is not None else HarnessSettings.timeout_s


def evaluate_remotely(args: argparse.Namespace, task: Task) -> Evaluation:
    """The candidate (default: the baseline) sent to the runner at --runner, as an operator: that
    runner's settings, measurement environment and score cache apply. Nothing here probes this
    machine's measurement environment or imports torch: a thin client (the light PEX, the wheel
    on a machine without torch) drives a runner elsewhere."""
    if args.candidate is None:
        candidate = baseline_candidate(task, args.repo_root)
    else:
        try:
            candidate = load_candidate(task, args.candidate)
        except InvalidCandidate:  # refused here, as locally: the same INVALID_CANDIDATE evaluation
            return refused_here(task, args.candidate, args.repo_root)
    with open_client(args) as client:
        return client.evaluate(candidate, check_only=args.check_only)  # --check-only: the runner's free check


def refused_here(task: Task, directory: Path | None, repo_root: Path) -> Evaluation:
    """The INVALID_CANDIDATE evaluation of a candidate (None: the baseline) refused before it is
    sent to a runner; it records this host (probe_host), not a measurement environment, and runs
    nothing (its files fail to load again)."""
    environment, settings = probe_host(), HarnessSettings()
    if directory is not None:
        return evaluate_directory(task, directory, repo_root, settings, environment=environment)
    return evaluate(task, None, repo_root, settings, environment=environment)


def add_json_flag(parser: argparse.ArgumentParser, what: str) -> None:
    """--json FILE, or --json alone (or '-') for stdout: the text report then goes to stderr."""
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help=f"write {what} as JSON to FILE; alone or '-': stdout"
    )


def write_json(target: str, document: object) -> None:
    """`document` to stdout ("-") or to the file `target`, whole: a plain file is written beside it,
    then renamed over it, so a reader (or a command cut short while writing) never finds half a
    document; anything else (/dev/stdout, a pipe) is written to as it is."""
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    path = Path(target)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        path.write_text(text, encoding="utf-8")
        return
    try:  # a new file of its own (O_EXCL, a random name): nothing planted beside it is written through
        handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except PermissionError:  # a file we may write in a folder we may not add to
        path.write_text(text, encoding="utf-8")
        return
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), path.stat().st_mode & 0o777 if path.exists() else 0o644)  # mkstemp's is 0600
        out.write(text)
    os.replace(partial, path)


def caller_error(message: str) -> int:
    print(f"arena: error: {message}", file=sys.stderr)
    return EXIT_CALLER_ERROR


def run(args: argparse.Namespace) -> int:
    repo_root: Path = args.repo_root
    try:
        task = load_task(repo_root, args.task)
    except UnknownTask as error:
        return caller_error(str(error))
    if args.candidate is not None and not args.candidate.is_dir():
        return caller_error(f"candidate folder {str(args.candidate)!r} does not exist or is not a folder")
    if runner_address(args):
        return print_evaluation(args, evaluate_remotely(args, task))  # the runner's settings: none are chosen here
    from arena.harness.launch import Standby, run_harness  # the trusted parent side; only here

    # The harness child starts now: its `import torch` (4-6 s on the H200 machine) overlaps the
    # probe, the candidate's digest and the key. A cached score leaves it unused.
    ahead = Standby(again=False)
    ahead.warm()
    try:
        settings = settings_from_args(args, task)
        runner = functools.partial(run_harness, standby=ahead)
        store = open_store(args.no_cache)
        evaluation: Evaluation
        if args.candidate is None:
            evaluation = evaluate(task, None, repo_root, settings, store, runner=runner)
        else:
            evaluation = evaluate_directory(task, args.candidate, repo_root, settings, store, runner=runner)
    finally:
        ahead.close()
    return print_evaluation(args, evaluation, settings.cases)


def print_evaluation(args: argparse.Namespace, evaluation: Evaluation, checked_only: tuple[str, ...] = ()) -> int:
    """Print the evaluation (and write its JSON); `checked_only`: the cases a machine without a GPU ran."""
    # With JSON on stdout, the human report goes to stderr so the JSON stays parseable.
    out = sys.stderr if args.json == "-" else sys.stdout
    print(format_evaluation(evaluation), file=out)
    if checked_only:
        print(f"(no GPU: checked only {', '.join(checked_only)}; timing needs a GPU)", file=out)
    if args.json:
        write_json(args.json, evaluation.to_dict())
    return 0
