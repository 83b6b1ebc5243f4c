"""`arena tasks [--json FILE|-] [--category C] [--runner HOST:PORT]`: list the tasks, as a table or
as JSON; from this repository, or from the runner at --runner (what its agents see)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arena.cli.evaluate import add_json_flag, write_json
from arena.cli.remote import add_runner_arguments, open_client, runner_address
from arena.runner.records import TaskView
from arena.task.digest import task_digest
from arena.task.load import load_tasks
from arena.task.task import CATEGORIES, Task

HELP = "list the tasks (address, category, digest, entry, ...)"
COLUMNS = ("address", "category", "cases", "timed", "entry", "digest")
RUNS_WITHOUT_CHECKOUT = True  # with --runner (or ARENA_RUNNER) it reads nothing of the repository


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_flag(parser, "a list of tasks")
    parser.add_argument("--category", choices=CATEGORIES, help="only tasks of this category")
    add_runner_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if runner_address(args):
        with open_client(args) as client:
            views = client.list_tasks(args.category or "")
        rows = [describe_view(view) for view in views]
        counts = [(len(view.cases), sum(case.timed for case in view.cases)) for view in views]
    else:
        tasks = [t for t in load_tasks(args.repo_root) if args.category in (None, t.category.value)]
        rows = [describe_task(task, args.repo_root) for task in tasks]
        counts = [(len(task.cases), len(task.timed_cases)) for task in tasks]
    if args.json:
        write_json(args.json, rows)
        return 0
    sys.stdout.write(format_table(rows, counts))
    return 0


def describe_task(task: Task, repo_root: Path) -> dict[str, Any]:
    """What an agent or a driver needs to pick a task; paths relative to the repo (task_dir) or task_dir."""
    return {
        "address": task.address,
        "category": task.category.value,
        "digest": task_digest(task, repo_root),
        "task_dir": task.task_dir,
        "editable_files": list(task.editable),
        "entry": str(task.entry),
        "signature": task.signature,
        "description": task.description,
    }


def describe_view(view: TaskView) -> dict[str, Any]:
    """describe_task's fields, from what a runner shows its agents."""
    return {
        "address": view.address,
        "category": view.category,
        "digest": view.digest,
        "task_dir": view.task_dir,
        "editable_files": list(view.editable_files),
        "entry": view.entry,
        "signature": view.signature,
        "description": view.description,
    }


def format_table(rows: list[dict[str, Any]], counts: list[tuple[int, int]]) -> str:
    """An aligned table, one task a line (with its case and timed-case counts), a header and a count."""
    cells = [[c.upper() for c in COLUMNS]]
    for row, (cases, timed) in zip(rows, counts):
        cells.append([
            row["address"], row["category"], str(cases), str(timed), row["entry"], row["digest"][:12],
        ])  # fmt: skip
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in cells]
    return "\n".join(lines) + f"\n{len(rows)} task(s)\n"
