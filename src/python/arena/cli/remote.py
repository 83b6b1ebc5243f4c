"""`--runner HOST:PORT`, `--token`, `--tls-ca FILE` and `--insecure-connect` for the commands that
can work through a remote runner."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.client.client import Client

RUNNER_VARIABLE = "ARENA_RUNNER"
TOKEN_VARIABLE = "ARENA_TOKEN"
TLS_CA_VARIABLE = "ARENA_TLS_CA"
INSECURE_CONNECT_VARIABLE = "ARENA_INSECURE_CONNECT"


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runner",
        metavar="HOST:PORT",
        help=f"ask the runner there, over gRPC (default: {RUNNER_VARIABLE}; neither: work in this process)",
    )
    parser.add_argument("--token", metavar="TOKEN", help=f"bearer token for --runner (default: {TOKEN_VARIABLE})")
    parser.add_argument(
        "--tls-ca",
        type=Path,
        metavar="FILE",
        help=f"PEM file of the CA that signed the runner's TLS certificate (default: {TLS_CA_VARIABLE})",
    )
    parser.add_argument(
        "--insecure-connect",
        action="store_true",
        help="allow a runner beyond loopback without TLS: the token crosses the network in plaintext "
        f"(also: {INSECURE_CONNECT_VARIABLE}=1)",
    )


def runner_address(args: argparse.Namespace) -> str:
    """The remote runner to use, or "" to work locally."""
    return str(getattr(args, "runner", None) or os.environ.get(RUNNER_VARIABLE, ""))


def open_client(args: argparse.Namespace) -> Client:
    # Imported here: the client needs grpc and the generated arena.v1 modules, which local work
    # (and the GPU machines' plain Python) does without.
    from arena.client.client import Client

    return Client(
        runner_address(args),
        getattr(args, "token", None) or os.environ.get(TOKEN_VARIABLE, ""),
        # Without these flags the client reads ARENA_TLS_CA and ARENA_INSECURE_CONNECT itself.
        tls_ca=getattr(args, "tls_ca", None),
        insecure_connect=True if getattr(args, "insecure_connect", False) else None,
    )
