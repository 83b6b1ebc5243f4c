"""`arena serve --listen HOST:PORT [--tls-cert FILE --tls-key FILE | --insecure-listen]
[--tokens FILE] [--state DIR] [--devices 0,1|cpu] [--executor local|docker|remote ...] [--store sqlite|reapi ...]
[--max-attempts N --max-refunds N --max-tries N --streams-per-identity N --calls-per-second X]`: run the runner.

Without TLS it listens only on loopback unless --insecure-listen (api/transport.py)."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from arena.api.limits import CallLimits
from arena.cache.reapi_store import ReapiStore
from arena.cache.seal import load_key
from arena.cache.sqlite_store import KEY_NAME
from arena.environment.probe import child_users
from arena.environment.users import Users, check_users
from arena.errors import ArenaError
from arena.evaluation.evaluate import Store
from arena.executors.base import Executor
from arena.executors.docker import DockerExecutor
from arena.executors.local import LocalExecutor
from arena.executors.remote import DEFAULT_PATH, RemoteExecutor
from arena.limits.cgroups import Found, found
from arena.limits.cpus import spelled
from arena.limits.limits import job_limits
from arena.pool.tokens import TOKEN_VARIABLE, read_token
from arena.runner.auth import load_tokens
from arena.runner.devices import discover_lanes, lane_cpus, parse_lanes
from arena.runner.folders import runner_state
from arena.runner.run_folders import sweep_run_folders
from arena.runner.runner import MAX_ATTEMPTS, MAX_CHECKS, MAX_PENDING_PER_AGENT, MAX_REFUNDS, MAX_TRIES, open_runner

if TYPE_CHECKING:
    import grpc

HELP = "run the runner: the gRPC service agents evaluate candidates through"
DEFAULT_LISTEN = "127.0.0.1:50051"


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def positive(value: int, flag: str) -> int:
    if value < 1:
        raise ArenaError(f"{flag} must be at least 1, not {value}")
    return value


def described_lanes(lanes: tuple[str, ...], executor: Executor) -> str:
    """ "0,1" or, where each lane keeps to CPUs of its own, "0 (CPUs 0-7),1 (CPUs 8-15)"."""
    cpus = executor.cpu_sets if isinstance(executor, LocalExecutor) else {}
    return ",".join(
        f"{lane} (CPUs {spelled(cpus[int(lane)])})" if lane.isdigit() and int(lane) in cpus else lane for lane in lanes
    )


def described_groups(groups: Found) -> str:
    """Where each job's control group is made (arena.limits.cgroups), or why none is."""
    return groups.hierarchy.describe() if groups.hierarchy is not None else f"none ({groups.reason})"


def described_users(users: Users | None) -> str:
    """Whom this runner's harness children run as (arena.environment.users)."""
    return "the runner's own, in a user namespace each" if users is None else users.describe()


def build_executor(args: argparse.Namespace, lanes: tuple[str, ...]) -> Executor:
    """The executor --executor names (a local one keeps each of `lanes` to CPUs of its own)."""
    if args.executor == "docker":
        return DockerExecutor.from_repo(args.repo_root)
    if args.executor == "remote":
        if not args.remote:
            raise ArenaError("--executor remote needs --remote HOST:PORT (the pool's REAPI endpoint)")
        return RemoteExecutor(
            endpoint=args.remote,
            gpu=args.remote_gpu,
            image=args.remote_image,
            instance=args.remote_instance,
            backend=args.remote_backend,
            path=args.remote_path,
            token=read_token(args.remote_token_file),
            tls_ca=args.remote_tls_ca,
        )
    return LocalExecutor(cpu_sets=lane_cpus(lanes))


def build_store(args: argparse.Namespace, state: Path) -> Store | None:
    """The score cache --store names; None: the runner's own SQLite file in `state`."""
    if args.store != "reapi":
        return None
    endpoint = args.store_endpoint or args.remote
    if not endpoint:
        raise ArenaError("--store reapi needs --store-endpoint HOST:PORT (or --remote, the pool's server)")
    try:
        key = load_key(args.store_key or state / KEY_NAME)
    except (OSError, ValueError) as error:
        raise ArenaError(f"cannot read the score cache's key: {error}") from None
    instance = args.store_instance if args.store_instance is not None else args.remote_instance
    return ReapiStore(
        endpoint, key, instance=instance, token=read_token(args.remote_token_file), tls_ca=args.remote_tls_ca
    )


def tls_credentials(args: argparse.Namespace) -> grpc.ServerCredentials | None:
    """The server's TLS credentials from --tls-cert and --tls-key (both or neither), or None."""
    if (args.tls_cert is None) != (args.tls_key is None):
        raise ArenaError("--tls-cert and --tls-key go together: give both files, or neither")
    if args.tls_cert is None:
        return None
    from arena.api.transport import server_credentials

    return server_credentials(args.tls_cert, args.tls_key)


def run(args: argparse.Namespace) -> int:
    from arena.api.transport import require_safe_listen

    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )

    credentials = tls_credentials(args)
    # Before anything starts: a refused address must not leave lanes and children behind.
    require_safe_listen(args.listen, tls=credentials is not None, insecure_listen=args.insecure_listen)
    try:
        tokens = load_tokens(args.tokens)
        lanes = parse_lanes(args.devices) if args.devices else discover_lanes()
        executor = build_executor(args, lanes)
        job_limits()  # a malformed ARENA_JOB_LIMITS is refused now, not at every job
        groups = found()  # as is an ARENA_CGROUPS folder where no group can be made
        users = child_users()  # and a root runner's ARENA_SANDBOX_USER that names no unprivileged users,
        check_users(users)  # or whose leases cannot be kept
    except (OSError, ValueError) as error:
        raise ArenaError(f"cannot configure the runner: {error}") from None
    if not len(tokens):
        raise ArenaError("no tokens: give --tokens FILE or set ARENA_TOKENS=agent:token,...")
    # Imported here: the server needs the generated arena.v1 modules, which exist only after
    # codegen; every other `arena` command (and --help) must work without them.
    from arena.api.server import create_server, serve

    state = args.state or runner_state()
    try:
        limits = replace(
            CallLimits(), streams_per_identity=args.streams_per_identity, calls_per_second=args.calls_per_second
        )
    except ValueError as error:
        raise ArenaError(f"cannot configure the runner: {error}") from None
    store = build_store(args, state)
    if isinstance(executor, RemoteExecutor):  # a pool that refuses its token stops the runner now
        unanswered = executor.check_access()
        if unanswered:
            print(f"arena serve: {unanswered}; jobs wait for it", file=sys.stderr, flush=True)
    sweep_run_folders()  # what runs killed before us left in the temporary directory
    runner = open_runner(
        args.repo_root,
        state,
        lanes=lanes,
        max_pending=args.max_pending,
        max_pending_per_agent=positive(args.max_pending_per_agent, "--max-pending-per-agent"),
        max_attempts=positive(args.max_attempts, "--max-attempts"),
        max_refunds=max(0, args.max_refunds),
        max_tries=positive(args.max_tries, "--max-tries"),
        max_checks=max(0, args.max_checks),
        executor=executor,
        require_isolation=not args.allow_unisolated,
        store=store,
    )
    try:
        server, port = create_server(
            args.listen,
            runner,
            tokens,
            credentials=credentials,
            insecure_listen=args.insecure_listen,
            limits=limits,
        )
        host = args.listen.rsplit(":", 1)[0]
        print(
            f"arena runner on {host}:{port}: lanes {described_lanes(lanes, executor)}, executor {args.executor}, "
            f"isolation {runner.isolation() or 'NONE'}, control groups {described_groups(groups)}, "
            f"sandbox users {described_users(users)}, "
            f"{len(tokens)} token(s), state {state}, "
            f"scores {'REAPI ' + store.endpoint if isinstance(store, ReapiStore) else 'sqlite'}, "
            f"{'TLS' if credentials is not None else 'plaintext'}",
            flush=True,
        )
        serve(server)
    finally:
        runner.stop()
    print("arena runner stopped", file=sys.stderr)
    return 0
