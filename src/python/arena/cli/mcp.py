"""`arena mcp [--workspace DIR]`: the MCP server for one attempt, on stdin/stdout (arena.agents.mcp_server).

An agent CLI starts it with ARENA_RUNNER, ARENA_TOKEN, ARENA_ATTEMPT and ARENA_WORKSPACE set; it
needs no repository. stdout carries the protocol, so nothing else is printed there."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "serve one attempt's tools (read_task, check, evaluate, submit, ...) to an agent over MCP on stdio"
RUNS_WITHOUT_CHECKOUT = True  # it talks to the runner in ARENA_RUNNER and reads only the workspace


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", type=Path, default=None, help="the attempt's workspace (default: ARENA_WORKSPACE, else the cwd)"
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: the MCP SDK and the client load only for this command.
    from arena.agents.mcp_server import serve_stdio

    serve_stdio(args.workspace)
    return 0
