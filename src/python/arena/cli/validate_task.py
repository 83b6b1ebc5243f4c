"""`arena validate-task`: prove tasks well formed, in full (the real harness) or fast (one process).

`--task ADDR` (repeatable) or `--all` picks the tasks; `--changed` keeps those whose folder differs
from the record of full validations (tasks/validated.json). Full, the default: per task, the
reference against float64, then the baseline, every exemplar and the wrong candidate evaluated
through the harness (arena.validation.full). `--fast`: every picked task's declaration, reference,
baseline and wrong candidate on its untimed cases, all through one child (arena.validation.fast).
`--record` writes the tasks whose full validation passed into the record. `--quality --timings
FILE`: the checks that need a GPU's timings, read from the product's own JSON (`arena suite
--exemplars --json FILE`): a strawman baseline and timed cases under 2 us (arena.validation.timings).
Exit 0 when every task is valid, 1 when any is not.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from arena.cli.evaluate import caller_error, settings_from_args
from arena.errors import ArenaError
from arena.executors.local import LocalExecutor
from arena.harness.settings import BACKENDS, HarnessSettings
from arena.task.load import load_task, load_tasks
from arena.task.task import Task
from arena.validation.fast import TASK_TIMEOUT_S, check_tasks_fast
from arena.validation.findings import Findings
from arena.validation.full import validate
from arena.validation.record import is_recorded, read_record, write_record
from arena.validation.timings import CaseTiming, check_timings, read_timings

HELP = "check that tasks are well formed: reference precision, baseline, exemplars, wrong candidate"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--task", action="append", metavar="ADDR", help="task address, e.g. tasks/triton2triton/softmax (repeatable)"
    )
    which.add_argument("--all", action="store_true", help="every task of the repository")
    parser.add_argument(
        "--changed", action="store_true", help="only tasks whose folder is not as tasks/validated.json records it"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fast", action="store_true", help="the fast tier: untimed cases, one process for all tasks")
    mode.add_argument("--record", action="store_true", help="record the tasks whose full validation passes")
    mode.add_argument(
        "--quality",
        action="store_true",
        help="the checks that need timings (a strawman baseline, timed cases under 2 us), from --timings",
    )
    parser.add_argument(
        "--timings",
        action="append",
        type=Path,
        metavar="FILE",
        help="with --quality: the JSON of `arena suite --exemplars --json FILE` from a GPU (repeatable)",
    )
    parser.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="wall-clock limit of each evaluation in seconds (fast: of each task's checks, default "
        f"{TASK_TIMEOUT_S:g}; full: default the task's timeout, else {HarnessSettings.timeout_s:g})",
    )


def _pick(args: argparse.Namespace) -> list[str] | None:
    """The addresses to validate (None when a declaration does not load: already reported)."""
    try:
        tasks: list[Task] = list(load_tasks(args.repo_root)) if args.all else []
    except ArenaError as error:
        print(f"FAIL  the declarations do not load: {error}")
        return None
    addresses = [t.address for t in tasks] if args.all else [_canonical(args.repo_root, a) for a in args.task]
    if args.changed:
        record = read_record(args.repo_root)
        dirs = {t.address: t.task_dir for t in tasks}
        addresses = [
            a for a in addresses if not is_recorded(args.repo_root, dirs.get(a) or _task_dir(args.repo_root, a), record)
        ]
    return addresses


def _canonical(repo_root: Path, address: str) -> str:
    """The address as the task declares it (folder:name); as given when it does not load."""
    try:
        return load_task(repo_root, address).address
    except ArenaError:
        return address  # its error is reported when it is validated


def _task_dir(repo_root: Path, address: str) -> str:
    try:
        return load_task(repo_root, address).task_dir
    except ArenaError:
        return address  # never recorded: it is validated, and its declaration's error reported then


def _report(address: str, findings: Findings, seconds: float | None = None) -> None:
    for line in findings.lines():
        print(line)
    verdict = "valid" if not findings.failures else f"INVALID ({len(findings.failures)} failure(s))"
    took = f" ({seconds:.1f} s)" if seconds is not None else ""
    print(f"{address}: {verdict}{took}", flush=True)


def validate_full(args: argparse.Namespace, address: str, executor: LocalExecutor) -> Findings:
    """The full validation of one task, through the harness (children started ahead by `executor`)."""
    try:
        task = load_task(args.repo_root, address)
    except ArenaError as error:
        return Findings(failures=[f"the declaration does not load: {error}"])
    if task.skip:
        # Skipped tasks are validated for form only: their candidates are not run.
        return Findings(notes=[f"valid declaration; skipped ({task.skip}), its candidates are not run"])
    args.check_only = True
    # The declared cases only: hidden copies (the same shapes, other seeds) keep an agent from
    # fitting the declared seeds, which a task's own baseline, exemplars and wrong candidate do
    # not; on the CPU they were half of each check's interpreted calls.
    settings = replace(settings_from_args(args, task), hidden_seeds=0)
    if settings.cases:
        print(f"no GPU: checking only the non-timed cases ({', '.join(settings.cases)})")
    return validate(task, args.repo_root, settings, runner=executor.run)


def validate_quality(repo_root: Path, address: str, timings: list[CaseTiming]) -> Findings:
    try:
        task = load_task(repo_root, address)
    except ArenaError as error:
        return Findings(failures=[f"the declaration does not load: {error}"])
    return check_timings(task, timings, repo_root)


def run(args: argparse.Namespace) -> int:
    if bool(args.quality) != bool(args.timings):
        return caller_error("--quality and --timings FILE go together")
    timings: list[CaseTiming] = []
    if args.quality:
        try:
            timings = read_timings(args.timings)
        except ArenaError as error:
            return caller_error(str(error))
    addresses = _pick(args)
    if addresses is None:
        return 1
    if not addresses:
        print("nothing to validate: every task is as tasks/validated.json records it")
        return 0
    if args.quality:
        found = {}
        for address in addresses:
            found[address] = validate_quality(args.repo_root, address, timings)
            _report(address, found[address])
    elif args.fast:
        found = check_tasks_fast(args.repo_root, addresses, args.timeout or TASK_TIMEOUT_S, progress=_report)
    else:
        found = {}
        # One child started ahead while the evaluation before it runs: not a wait for a fresh
        # child's imports per evaluation.
        executor = LocalExecutor()
        try:
            for address in addresses:
                found[address] = validate_full(args, address, executor)
                _report(address, found[address])
        finally:
            executor.close()
    invalid = [a for a, f in found.items() if f.failures]
    if args.record:
        passed = [load_task(args.repo_root, a).task_dir for a, f in found.items() if not f.failures]
        write_record(args.repo_root, passed)
        print(f"recorded {len(passed)} task(s) in tasks/validated.json")
    if len(addresses) > 1:
        print(f"{len(addresses) - len(invalid)} of {len(addresses)} task(s) valid", file=sys.stdout)
    return 1 if invalid else 0
