"""`arena leaderboard [--runner HOST:PORT --token T] [--category C] [--json [FILE|-]]`: submitted
attempts, ranked."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from arena.cli.evaluate import add_json_flag, write_json
from arena.cli.remote import add_runner_arguments, open_client, runner_address
from arena.runner.records import LeaderboardRow
from arena.task.task import CATEGORIES

HELP = "show the leaderboard: per agent and category, from submitted attempts"
RUNS_WITHOUT_CHECKOUT = True  # with --runner (or ARENA_RUNNER) it reads nothing of the repository
COLUMNS = (
    "agent", "category", "tasks", "compile", "correct", "unchecked", "speedup", "geomean", "score",
    # Means per closed attempt: the runner's counters, then the usage operators recorded (blank: none did).
    "checks", "evals", "tok-in", "tok-out", "tok-cached", "cost", "turns", "tools", "wall",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_runner_arguments(parser)  # --runner, --token, --tls-ca, --insecure-connect
    parser.add_argument("--category", choices=CATEGORIES, default="", help="only this category")
    add_json_flag(parser, "the rows")


def run(args: argparse.Namespace) -> int:
    # Imported here: the client needs the generated arena.v1 modules, which exist only after
    # codegen; every other `arena` command (and --help) must work without them.
    from arena.client.client import Client

    # A runner's address (flag or ARENA_RUNNER): ask it with the token; none: a runner in this process.
    client = open_client(args) if runner_address(args) else Client(None, repo_root=args.repo_root)
    with client:
        rows = client.leaderboard(args.category)
    if args.json:
        write_json(args.json, [asdict(row) for row in rows])
        return 0
    sys.stdout.write(format_leaderboard(rows))
    return 0


def format_leaderboard(rows: tuple[LeaderboardRow, ...]) -> str:
    cells = [[column.upper() for column in COLUMNS]]
    for row in rows:
        cells.append([
            row.agent, row.category, str(row.tasks), f"{row.compile_rate:.0%}", f"{row.correct_rate:.0%}",
            f"{row.unchecked_rate:.0%}",
            f"{row.mean_speedup:.2f}x", f"{row.geomean_speedup:.2f}x", f"{row.mean_score:.1f}",
            f"{row.mean_checks:.1f}", f"{row.mean_evaluations:.1f}",
            blank_or(row.mean_input_tokens, "{:,.0f}"), blank_or(row.mean_output_tokens, "{:,.0f}"),
            blank_or(row.mean_cached_tokens, "{:,.0f}"), blank_or(row.mean_cost_usd, "${:.2f}"),
            blank_or(row.mean_turns, "{:.1f}"), blank_or(row.mean_tool_calls, "{:.1f}"),
            blank_or(row.mean_wall_s, "{:.0f}s"),
        ])  # fmt: skip
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in cells]
    return "\n".join(lines) + f"\n{len(rows)} row(s)\n"


def blank_or(value: float | None, template: str) -> str:
    """`value` through `template`; blank where nothing was recorded."""
    return "" if value is None else template.format(value)
