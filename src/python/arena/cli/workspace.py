"""`arena workspace TASK DIR [--force] [--runner HOST:PORT]`: write an agent's workspace for a task
into DIR (TASK.md, the editable files under candidate/, the other baseline files under context/),
built from this repository, or from what the runner at --runner shows its agents (GetTask).
Both build it from the same TaskView, so both write the same files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.cli.remote import add_runner_arguments, open_client, runner_address
from arena.runner.records import TaskView
from arena.runner.task_view import view_task
from arena.runner.workspace import TASK_FILE, FolderNotEmpty, write_workspace
from arena.task.digest import task_digest
from arena.task.load import load_task

HELP = "write a task's workspace (TASK.md, editable and readable files) into a folder"
EXIT_CALLER_ERROR = 2  # as `arena evaluate`: the caller's mistake (here, a folder already in use)
RUNS_WITHOUT_CHECKOUT = True  # with --runner (or ARENA_RUNNER) it reads nothing of the repository


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", metavar="TASK", help="task address, e.g. tasks/triton2triton/softmax")
    parser.add_argument("folder", type=Path, metavar="DIR", help="the folder to write (created; must be empty)")
    parser.add_argument(
        "--force", action="store_true", help="write into a non-empty DIR, over the workspace's own files"
    )
    add_runner_arguments(parser)


def local_view(repo_root: Path, address: str) -> TaskView:
    """The view a runner on this repository would hand out."""
    task = load_task(repo_root, address)
    return view_task(task, repo_root, task_digest(task, repo_root))


def run(args: argparse.Namespace) -> int:
    try:
        if runner_address(args):
            with open_client(args) as client:
                written = client.workspace(args.task, args.folder, force=args.force)
        else:
            written = write_workspace(local_view(args.repo_root, args.task), args.folder, force=args.force)
    except FolderNotEmpty as error:
        print(f"arena workspace: error: {error}", file=sys.stderr)
        return EXIT_CALLER_ERROR
    print(f"wrote {len(written)} file(s) into {args.folder}; start with {args.folder / TASK_FILE}")
    return 0
