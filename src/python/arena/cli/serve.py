"""`arena serve --listen HOST:PORT [--tokens FILE] [--state DIR] [--devices 0,1|cpu]`: run the runner."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.errors import ArenaError
from arena.runner.auth import load_tokens
from arena.runner.devices import discover_lanes, parse_lanes
from arena.runner.runner import open_runner

HELP = "run the runner: the gRPC service agents evaluate candidates through"
DEFAULT_LISTEN = "127.0.0.1:50051"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT", help=f"default {DEFAULT_LISTEN}"
    )
    parser.add_argument(
        "--tokens", type=Path, metavar="FILE", help="agent:token[:operator] entries (also read: ARENA_TOKENS)"
    )
    parser.add_argument(
        "--state", type=Path, metavar="DIR", help="queue, attempts and score cache (default .arena/runner)"
    )
    parser.add_argument(
        "--devices", metavar="0,1|cpu", help="device lanes (default: ARENA_DEVICES or discovered)"
    )
    parser.add_argument(
        "--max-pending", type=int, default=256, help="queued evaluations accepted before refusing"
    )


def run(args: argparse.Namespace) -> int:
    try:
        tokens = load_tokens(args.tokens)
        lanes = parse_lanes(args.devices) if args.devices else discover_lanes()
    except (OSError, ValueError) as error:
        raise ArenaError(f"cannot configure the runner: {error}") from None
    if not len(tokens):
        raise ArenaError("no tokens: give --tokens FILE or set ARENA_TOKENS=agent:token,...")
    # Imported here: the server needs the generated arena.v1 modules, which exist only after
    # codegen; every other `arena` command (and --help) must work without them.
    from arena.runner.server import create_server, serve

    state = args.state or args.repo_root / ".arena" / "runner"
    runner = open_runner(args.repo_root, state, lanes=lanes, max_pending=args.max_pending)
    try:
        server, port = create_server(args.listen, runner, tokens)
        host = args.listen.rsplit(":", 1)[0]
        print(
            f"arena runner on {host}:{port}: lanes {','.join(lanes)}, {len(tokens)} token(s), state {state}",
            flush=True,
        )
        serve(server)
    finally:
        runner.stop()
    print("arena runner stopped", file=sys.stderr)
    return 0
