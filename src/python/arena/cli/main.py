"""The `arena` command line: one subcommand per module, listed in COMMANDS.

Each command module has HELP (one line), add_arguments(parser) and run(args) -> exit code.
Every command's args carry `repo_root` (a Path): the repository holding pants.toml, found
from --repo-root or the working directory. This is the one place that maps errors to exit codes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType

from arena.cli import (
    agent,
    compare,
    evaluate,
    image,
    import_aka,
    leaderboard,
    mcp,
    pool,
    report,
    reproduce,
    serve,
    suite,
    tasks,
    validate_task,
    workspace,
)
from arena.cli.remote import runner_address
from arena.environment.measurement import PYTHON_VARIABLE, select_python
from arena.environment.probe import checked_environment
from arena.errors import (
    ArenaError,
    BudgetExhausted,
    InvalidCandidate,
    NoDevice,
    PermissionDenied,
    TaskDeclarationError,
    UnknownTask,
    UnusableEnvironment,
)
from arena.harness.version import harness_version, pin_sources
from arena.task.load import find_repo_root

COMMANDS: dict[str, ModuleType] = {
    "tasks": tasks,
    "evaluate": evaluate,
    "validate-task": validate_task,
    "suite": suite,
    "serve": serve,
    "leaderboard": leaderboard,
    "image": image,
    "reproduce": reproduce,
    "workspace": workspace,
    "import": import_aka,
    "report": report,
    "compare": compare,
    "mcp": mcp,
    "agent": agent,
    "pool": pool,
}

EXIT_USAGE = 2  # argparse's own code for a bad command line
# Caller and system faults by exit code; a command's own failure (e.g. a wrong candidate) is 1.
EXIT_CODES: dict[type[ArenaError], int] = {
    UnknownTask: 3,
    TaskDeclarationError: 4,
    InvalidCandidate: 5,
    BudgetExhausted: 6,
    NoDevice: 7,
    PermissionDenied: 8,
    UnusableEnvironment: 10,
}
EXIT_OTHER_ERROR = 9


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Kernel arena: tasks, candidates, evaluations.")
    parser.add_argument(
        "--repo-root",
        type=Path,
        default=None,
        help="the repository (default: found from the working directory)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        default=None,
        help=f"the Python harness children measure with, e.g. a GPU machine's python3 (default: {PYTHON_VARIABLE}, "
        "else this command's own; docs/executors.md)",
    )
    parser.add_argument("--version", action="version", version=f"arena, harness {harness_version()[:12]}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        # Also after the command (`arena suite --repo-root X`); SUPPRESS keeps the one given before.
        sub.add_argument("--repo-root", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        sub.add_argument("--python", metavar="PATH", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        module.add_arguments(sub)
    return parser


def exit_code_for(error: ArenaError) -> int:
    for kind, code in EXIT_CODES.items():
        if isinstance(error, kind):
            return code
    return EXIT_OTHER_ERROR


# Commands that run harness children on this host (unless sent to a runner or an executor elsewhere).
MEASURING = ("evaluate", "suite", "serve", "reproduce")


def check_measurement(args: argparse.Namespace) -> None:
    """Before a measuring command starts: its measurement environment has what the harness needs
    (UnusableEnvironment) and can use this machine's GPU (NoDevice), said now rather than after
    a suite has run on the CPU."""
    if args.command not in MEASURING or runner_address(args):
        return
    if getattr(args, "executor", "local") != "local":
        return  # the image or the pool measures; the executor checks its own
    backend = getattr(args, "backend", "auto")
    if str(getattr(args, "devices", "") or "").strip() == "cpu":
        backend = "cpu"
    checked_environment(backend)


def repo_root_for(args: argparse.Namespace) -> Path | None:
    """The checkout a command reads; None when there is none and the command talks to a runner
    (an agent with `arena workspace --runner` needs no repository)."""
    try:
        return find_repo_root(args.repo_root)
    except ArenaError:
        without = getattr(COMMANDS[args.command], "RUNS_WITHOUT_CHECKOUT", False)
        if without == "always" or (without and runner_address(args)):
            return None
        raise


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    pin_sources()  # the harness this process measures with: later jobs check it is unchanged
    select_python(args.python)  # before anything probes the measurement environment
    try:
        args.repo_root = repo_root_for(args)
        check_measurement(args)
        return int(COMMANDS[args.command].run(args))
    except ArenaError as error:
        print(f"arena {args.command}: error: {error}", file=sys.stderr)
        return exit_code_for(error)


if __name__ == "__main__":
    raise SystemExit(main())
