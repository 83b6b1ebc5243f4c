"""`arena suite --category C [--tasks ADDR...] [--exemplars | --submissions DIR] [--json FILE]`

Evaluates every task of a category: the baselines (no-ops: the instrument's own noise), the
exemplars, or an agent's submissions (DIR/<task name>/ laid out like the task folder). Prints a
line per evaluation, then the table and the suite's geomean and fast_p. Exits 0 when the suite
ran, with or without a GPU (it says what needed one).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Iterator

from arena.candidate.candidate import exemplar_candidates
from arena.cli.evaluate import add_run_arguments, caller_error, open_store, settings_from_args, write_json
from arena.errors import UnknownTask
from arena.evaluation.evaluate import evaluate, evaluate_directory
from arena.evaluation.evaluation import Evaluation, Status
from arena.report.table import format_suite
from arena.scoring.score import task_outcome
from arena.scoring.stats import summarize_suite
from arena.task.load import load_tasks, parse_address
from arena.task.task import CATEGORIES, Task

HELP = "evaluate every task of a category (baselines, exemplars or submissions) and summarize"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--category", required=True, choices=CATEGORIES)
    parser.add_argument("--tasks", nargs="+", metavar="ADDR", help="only these tasks of the category")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--exemplars", action="store_true", help="evaluate each task's exemplars")
    which.add_argument("--submissions", type=Path, metavar="DIR", help="DIR/<task name>/ holds each task's candidate")
    parser.add_argument("--json", metavar="FILE|-", help="write every evaluation and the summary as JSON")
    add_run_arguments(parser)


def select_tasks(repo_root: Path, category: str, addresses: list[str] | None) -> list[Task]:
    tasks = [task for task in load_tasks(repo_root) if task.category.value == category]
    if not addresses:
        return tasks
    wanted = {":".join(parse_address(address)) for address in addresses}
    unknown = wanted - {task.address for task in tasks}
    if unknown:
        raise UnknownTask(f"not {category} tasks: {', '.join(sorted(unknown))}")
    return [task for task in tasks if task.address in wanted]


def evaluations(tasks: list[Task], args: argparse.Namespace) -> Iterator[tuple[str, Evaluation]]:
    """(label, evaluation) for every candidate the options name, in task order."""
    store = open_store(args.repo_root, args.no_cache)
    for task in tasks:
        settings = settings_from_args(args, task)
        if args.exemplars:
            for folder, candidate in exemplar_candidates(task, args.repo_root).items():
                yield f"{task.address} [{folder}]", evaluate(task, candidate, args.repo_root, settings, store)
        elif args.submissions is not None:
            directory: Path = args.submissions / task.name
            yield task.address, evaluate_directory(task, directory, args.repo_root, settings, store)
        else:
            yield task.address, evaluate(task, None, args.repo_root, settings, store)


def needs_gpu(evaluation: Evaluation, check_only: bool) -> bool:
    """True when a GPU would have told more: checking (NEEDS_DEVICE) or timing (correct, untimed)."""
    untimed = evaluation.correct and not evaluation.score.speedup and not check_only
    return evaluation.status is Status.NEEDS_DEVICE or untimed


def run(args: argparse.Namespace) -> int:
    try:
        tasks = select_tasks(args.repo_root, args.category, args.tasks)
    except UnknownTask as error:
        return caller_error(str(error))
    if args.submissions is not None and not args.submissions.is_dir():
        return caller_error(f"submissions folder {str(args.submissions)!r} does not exist or is not a folder")
    done: list[tuple[str, Evaluation]] = []
    # With JSON on stdout, the human report goes to stderr so the JSON stays parseable.
    report = sys.stderr if args.json == "-" else sys.stdout
    print(f"{len(tasks)} {args.category} task(s)", file=report)
    for label, evaluation in evaluations(tasks, args):
        done.append((label, evaluation))
        speed = f"speedup {evaluation.score.geomean_speedup:.3f}" if evaluation.score.geomean_speedup else "untimed"
        cached = " (cached)" if evaluation.cached else ""
        print(f"[{len(done)}] {label}  {evaluation.status.value}  {speed}{cached}", file=report, flush=True)
    summary = summarize_suite([task_outcome(evaluation) for _, evaluation in done])
    print("\n" + format_suite(done, summary), file=report)
    waiting = [label for label, evaluation in done if needs_gpu(evaluation, args.check_only)]
    if waiting:
        print(
            f"\n{len(waiting)} of {len(done)} evaluation(s) need a GPU to be checked or timed "
            f"(run on a GPU machine for speedups): {', '.join(waiting)}",
            file=report,
        )
    if args.json:
        write_json(
            args.json,
            {
                "category": args.category,
                "candidates": "exemplars" if args.exemplars else "submissions" if args.submissions else "baselines",
                "evaluations": [dict(evaluation.to_dict(), label=label) for label, evaluation in done],
                "summary": {
                    "tasks": summary.tasks,
                    "correct": summary.correct,
                    "timed": summary.timed,
                    "geomean_speedup": summary.geomean_speedup if summary.tasks else None,
                    "fast_p": summary.fast_p,
                },
                "created_unix_ms": int(time.time() * 1000),
            },
        )
    return 0
