"""`arena agent run --config JSON --suite ADDR [--tasks ADDR...] [--runs N] [--runner HOST:PORT] [--out DIR]`

Runs an agent configuration (an `agent_config` target: `./pants run //agents:<config> -- --suite
tasks/hip2hip:all --runs 3`) on every task of a suite, N times, through a runner: for each task and
run, a fresh attempt opened with the agent's token, a fresh workspace, the adapter's command in
its own process group with a scrubbed environment, in an OS sandbox (bubblewrap: its workspace, a
private HOME and the programs it runs, never the repository or the runner's state; where none
can be made the run is refused unless --allow-unisolated), killed at the deadline plus a grace;
then the runner finalizes the workspace's candidate (evaluated fresh when the agent submitted
nothing) and records the usage and the event stream. With no --runner (nor ARENA_RUNNER) a
runner starts in this process, with a fresh token for the agent. Each run is written as a
submissions folder (arena.agents.submissions) under --out, for `arena report --submissions`;
the workspaces go under --work (default: $XDG_STATE_HOME/arena/workspaces).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.remote import INSECURE_CONNECT_VARIABLE, RUNNER_VARIABLE, TOKEN_VARIABLE

HELP = "run an agent configuration on every task of a suite through the runner (arena agent run)"
RUNS_WITHOUT_CHECKOUT = True  # with --runner and --tasks it needs no repository
OPERATOR_TOKEN_VARIABLE = "ARENA_OPERATOR_TOKEN"  # as arena.agents.orchestrator (not imported before run)
GRACE_S = 10.0  # as arena.agents.session.GRACE_S


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser("run", help="run the agent on a suite", description=HELP)
    run.add_argument("--config", required=True, metavar="JSON", help="the agent_config's fields as JSON (or @FILE)")
    run.add_argument("--suite", metavar="ADDR", help="a kernel_task_suite address (tasks/hip2hip:all) or a folder")
    run.add_argument("--tasks", nargs="+", metavar="ADDR", default=[], help="these tasks (also with --suite)")
    run.add_argument("--runs", type=int, default=1, help="runs of every task (default: 1)")
    run.add_argument("--out", type=Path, help="where the submissions folders go (default: dist/agents/NAME-DIGEST)")
    run.add_argument(
        "--work", type=Path, metavar="DIR",
        help="where the workspaces go (default: a new folder in $XDG_STATE_HOME/arena/workspaces/NAME-DIGEST, "
        "outside the repository)",
    )  # fmt: skip
    run.add_argument(
        "--allow-unisolated", action="store_true",
        help="run the agent without an OS sandbox where none can be made (it would see the repository; recorded)",
    )  # fmt: skip
    run.add_argument("--grace", type=float, default=GRACE_S, help=f"seconds past the deadline (default: {GRACE_S:g})")
    run.add_argument(
        "--runner", metavar="HOST:PORT", help=f"the runner (default: {RUNNER_VARIABLE}; neither: one in this process)"
    )
    run.add_argument("--token", metavar="TOKEN", help=f"the agent's token for --runner (default: {TOKEN_VARIABLE})")
    run.add_argument(
        "--operator-token",
        metavar="TOKEN",
        help=f"an operator's token for --runner, to finalize and record (default: {OPERATOR_TOKEN_VARIABLE})",
    )
    run.add_argument("--insecure-connect", action="store_true", help=f"as {INSECURE_CONNECT_VARIABLE}=1")


def run(args: argparse.Namespace) -> int:
    # Imported here: the agents, the client and grpc load only for this command.
    from arena.agents.orchestrator import Plan, run_plan

    plan = Plan(
        config=args.config,
        repo_root=args.repo_root,
        suite=args.suite,
        tasks=tuple(args.tasks),
        runs=args.runs,
        out=args.out,
        work=args.work,
        allow_unisolated=args.allow_unisolated,
        grace_s=args.grace,
        runner=args.runner or "",
        token=args.token or "",
        operator_token=args.operator_token or "",
        insecure_connect=args.insecure_connect,
    )
    return run_plan(plan)
