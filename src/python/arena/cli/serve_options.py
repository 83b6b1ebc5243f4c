"""The command line of `arena serve`, grouped by concern. The order of the groups is the order
`arena serve --help` lists the options in (the usage line included), so keep it."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.api.limits import CallLimits
from arena.executors.remote import DEFAULT_PATH
from arena.pool.tokens import TOKEN_VARIABLE
from arena.runner.runner import MAX_ATTEMPTS, MAX_CHECKS, MAX_PENDING_PER_AGENT, MAX_REFUNDS, MAX_TRIES

DEFAULT_LISTEN = "127.0.0.1:50051"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_listening_options(parser)
    add_runner_options(parser)
    add_budget_options(parser)
    add_executor_options(parser)
    add_pool_options(parser)
    add_store_options(parser)


def add_listening_options(parser: argparse.ArgumentParser) -> None:
    """Where the runner listens, whether through TLS, and whom it answers."""
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT", help=f"default {DEFAULT_LISTEN}")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="PEM certificate chain: serve TLS")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="PEM private key of --tls-cert")
    parser.add_argument(
        "--insecure-listen",
        action="store_true",
        help="allow plaintext on an address beyond loopback: bearer tokens cross the network unencrypted",
    )
    parser.add_argument(
        "--tokens", type=Path, metavar="FILE", help="agent:token[:operator] entries (also read: ARENA_TOKENS)"
    )


def add_runner_options(parser: argparse.ArgumentParser) -> None:
    """Where the runner keeps its state, which lanes it runs, how much it queues and what it logs."""
    parser.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="queue, attempts and score cache (default $XDG_STATE_HOME/arena/runner: ~/.local/state/arena/runner)",
    )
    parser.add_argument("--devices", metavar="0,1|cpu", help="device lanes (default: ARENA_DEVICES or discovered)")
    parser.add_argument("--max-pending", type=int, default=256, help="queued evaluations accepted before refusing")
    parser.add_argument(
        "--max-pending-per-agent",
        type=int,
        default=MAX_PENDING_PER_AGENT,
        help=f"an agent's evaluations queued at once (default {MAX_PENDING_PER_AGENT}; operators are not capped)",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="info: a line per job accepted, started, done or failed (key=value fields), on stderr",
    )


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    """What each agent may spend, in a section of --help of their own."""
    budgets = parser.add_argument_group("budgets and limits (docs/runner.md)")
    budgets.add_argument("--max-attempts", type=int, default=MAX_ATTEMPTS, help="attempts per agent and task")
    budgets.add_argument(
        "--max-refunds", type=int, default=MAX_REFUNDS, help="runner-failed jobs refunded per agent and task"
    )
    budgets.add_argument("--max-tries", type=int, default=MAX_TRIES, help="runs of a job that ends in a fault")
    budgets.add_argument(
        "--max-checks", type=int, default=MAX_CHECKS, help="free checks per attempt (compile and declared cases)"
    )
    budgets.add_argument(
        "--streams-per-identity", type=int, default=CallLimits.streams_per_identity, help="open Evaluate streams"
    )
    budgets.add_argument(
        "--calls-per-second", type=float, default=CallLimits.calls_per_second, help="per identity, sustained"
    )


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """Where each evaluation runs, and whether it may run without isolation."""
    parser.add_argument(
        "--executor",
        choices=("local", "docker", "remote"),
        default="local",
        help="where each evaluation runs: this host, the pinned ROCm image (third_party/rocm/image.lock), "
        "or a REAPI GPU pool (--remote, --remote-gpu, --remote-image)",
    )
    parser.add_argument(
        "--allow-unisolated",
        action="store_true",
        help="run agents' candidates even where nothing isolates them (no bubblewrap sandbox here, "
        "local executor): only for agents you trust; every evaluation records sandbox=none",
    )


def add_pool_options(parser: argparse.ArgumentParser) -> None:
    """The REAPI GPU pool of --executor remote (its token and CA serve --store reapi too)."""
    parser.add_argument("--remote", metavar="HOST:PORT", help="the pool's REAPI Execution endpoint")
    parser.add_argument("--remote-gpu", default="MI300X", help="the pool's GPU model (platform property)")
    parser.add_argument("--remote-image", default="", help="repository@sha256:digest the workers run")
    parser.add_argument("--remote-instance", default="", help="REAPI instance name")
    parser.add_argument(
        "--remote-backend", choices=("rocm", "cuda", "cpu"), default="rocm", help="what the pool's GPUs run (recorded)"
    )
    parser.add_argument(
        "--remote-path", default=DEFAULT_PATH, metavar="PATH", help="PATH of the pool's actions: where python3 is found"
    )
    parser.add_argument(
        "--remote-token-file",
        type=Path,
        metavar="FILE",
        help="a runner's token for the pool (and --store reapi) from `arena pool token --role runner` "
        f"(default: {TOKEN_VARIABLE})",
    )
    parser.add_argument(
        "--remote-tls-ca",
        type=Path,
        metavar="FILE",
        help="PEM file of the CA that signed the pool's TLS certificate (default: plaintext)",
    )


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """The score cache: the runner's own SQLite file, or one REAPI server's that runners share."""
    parser.add_argument(
        "--store",
        choices=("sqlite", "reapi"),
        default="sqlite",
        help="the score cache: <state>/scores.sqlite, or the action cache and CAS of a REAPI server "
        "(the pool's: --store-endpoint, default --remote), shared by every runner that uses it",
    )
    parser.add_argument(
        "--store-endpoint", metavar="HOST:PORT", help="the REAPI server of --store reapi (default --remote)"
    )
    parser.add_argument("--store-instance", help="its REAPI instance name (default --remote-instance)")
    parser.add_argument(
        "--store-key",
        type=Path,
        metavar="FILE",
        help="the key sealing shared scores: runners sharing a cache hold the same file (default <state>/scores.key)",
    )
