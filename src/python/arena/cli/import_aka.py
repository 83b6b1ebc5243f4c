"""`arena import aka CHECKOUT --out DIR [--json FILE|-]`: kernel_task declarations for the
triton2triton tasks of an AgentKernelArena checkout (docs/importer.md); its hip2hip and torch2hip
tasks are read too and listed, none imported, each with why.

Prints one line per task: imported (its address under DIR) or not (the reason). Exit 0 when the
import ran, whatever it imported; a missing checkout or a DIR in use is an error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.cli.evaluate import add_json_flag, write_json
from arena.errors import ArenaError
from arena.importer.importer import import_checkout
from arena.importer.report import format_table, report_document
from arena.task.load import TASKS_FOLDER

HELP = "import another arena's tasks as kernel_task declarations (aka: AgentKernelArena)"
SOURCE_HELP = (
    "AgentKernelArena's triton2triton tasks whose kernels take and return tensors (its hip2hip and "
    "torch2hip tasks are listed with why none imports)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    aka = sources.add_parser("aka", help=SOURCE_HELP, description=SOURCE_HELP)
    aka.add_argument("checkout", type=Path, metavar="CHECKOUT", help="a checkout of AMD-AGI/AgentKernelArena")
    aka.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="where to write the tasks (new, empty, or an earlier import's); never commit it",
    )
    add_json_flag(aka, "the outcome of every task")


def run(args: argparse.Namespace) -> int:
    if args.repo_root is not None and args.out.resolve().is_relative_to(args.repo_root.resolve() / TASKS_FOLDER):
        # Pants and git would take them for this repository's own tasks.
        raise ArenaError(
            f"--out {args.out} is inside this repository's {TASKS_FOLDER}/: the imported tasks hold "
            "third-party code and are never committed; write them under dist/ (e.g. dist/aka)"
        )
    outcomes = import_checkout(args.checkout, args.out, fit=True)  # tolerances fitted (importer/fit.py)
    # With JSON on stdout, the table goes to stderr so the JSON stays parseable.
    table = sys.stderr if args.json == "-" else sys.stdout
    table.write(format_table(outcomes))
    if args.json:
        write_json(args.json, report_document(outcomes, args.checkout, args.out))
    if any(o.imported for o in outcomes):
        print(f"validate one with: arena --repo-root {args.out} validate-task --task <address>", file=table)
    return 0
