"""`arena tasks [--json FILE|-] [--category C]`: list the tasks, as a table or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from arena.task.digest import task_digest
from arena.task.load import load_tasks
from arena.task.task import CATEGORIES, Task

HELP = "list the tasks (address, category, digest, entry, ...)"
COLUMNS = ("address", "category", "cases", "timed", "entry", "digest")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE|-", help="write a JSON list of tasks to FILE ('-': stdout)")
    parser.add_argument("--category", choices=CATEGORIES, help="only tasks of this category")


def run(args: argparse.Namespace) -> int:
    repo_root: Path = args.repo_root
    tasks = [t for t in load_tasks(repo_root) if args.category in (None, t.category.value)]
    rows = [describe_task(task, repo_root) for task in tasks]
    if args.json:
        text = json.dumps(rows, indent=2, sort_keys=True) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            Path(args.json).write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(format_table(tasks, rows))
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


def format_table(tasks: list[Task], rows: list[dict[str, Any]]) -> str:
    """An aligned table, one task a line, with a header and a count."""
    cells = [[c.upper() for c in COLUMNS]]
    for task, row in zip(tasks, rows):
        cells.append([
            task.address, row["category"], str(len(task.cases)), str(len(task.timed_cases)),
            row["entry"], row["digest"][:12],
        ])  # fmt: skip
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in cells]
    return "\n".join(lines) + f"\n{len(tasks)} task(s)\n"
