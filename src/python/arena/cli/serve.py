"""`arena serve --listen HOST:PORT [--tls-cert FILE --tls-key FILE | --insecure-listen]
[--tokens FILE] [--state DIR] [--devices 0,1|cpu] [--executor local|docker|remote ...] [--store sqlite|reapi ...]
[--max-attempts N --max-refunds N --max-tries N --streams-per-identity N --calls-per-second X]`: run the runner.

Without TLS it listens only on loopback unless --insecure-listen (api/transport.py)."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from arena.api.limits import CallLimits
from arena.cache.reapi_store import ReapiStore
from arena.cache.seal import load_key
from arena.cache.sqlite_store import KEY_NAME
from arena.cli.serve_options import (  # noqa: F401 - main.py asks each command's module for add_arguments
    DEFAULT_LISTEN,
    add_arguments,
)
from arena.environment.probe import child_users
from arena.environment.users import Users, check_users
from arena.errors import ArenaError
from arena.evaluation.evaluate import Store
from arena.executors.base import Executor
from arena.executors.docker import DockerExecutor
from arena.executors.local import LocalExecutor
from arena.executors.remote import RemoteExecutor
from arena.limits.cgroups import Found, found
from arena.limits.cpus import spelled
from arena.limits.limits import job_limits
from arena.pool.tokens import read_token
from arena.runner.auth import Tokens, load_tokens
from arena.runner.devices import discover_lanes, lane_cpus, parse_lanes
from arena.runner.folders import runner_state
from arena.runner.run_folders import sweep_run_folders
from arena.runner.runner import Runner, open_runner

if TYPE_CHECKING:
    import grpc

HELP = "run the runner: the gRPC service agents evaluate candidates through"


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


@dataclass(frozen=True)
class Setup:
    """What the runner is set up with, all checked before it opens anything."""

    tokens: Tokens
    lanes: tuple[str, ...]
    executor: Executor
    groups: Found
    users: Users | None


def log_to_stderr(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def checked_setup(args: argparse.Namespace) -> Setup:
    """The tokens, lanes and executor of `args`; the environment's settings for jobs are checked
    here too, so that a wrong one stops the runner at start instead of failing every job."""
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
    return Setup(tokens, lanes, executor, groups, users)


def call_limits(args: argparse.Namespace) -> CallLimits:
    """--streams-per-identity and --calls-per-second, refused unless positive."""
    try:
        return replace(
            CallLimits(), streams_per_identity=args.streams_per_identity, calls_per_second=args.calls_per_second
        )
    except ValueError as error:
        raise ArenaError(f"cannot configure the runner: {error}") from None


def check_pool_access(executor: Executor) -> None:
    """A pool that refuses its token stops the runner now; one that does not answer only delays jobs."""
    if isinstance(executor, RemoteExecutor):
        unanswered = executor.check_access()
        if unanswered:
            print(f"arena serve: {unanswered}; jobs wait for it", file=sys.stderr, flush=True)


def opened_runner(args: argparse.Namespace, state: Path, setup: Setup, store: Store | None) -> Runner:
    """The runner on `setup`'s lanes and executor, with the budgets of `args` (each checked)."""
    return open_runner(
        args.repo_root,
        state,
        lanes=setup.lanes,
        max_pending=args.max_pending,
        max_pending_per_agent=positive(args.max_pending_per_agent, "--max-pending-per-agent"),
        max_attempts=positive(args.max_attempts, "--max-attempts"),
        max_refunds=max(0, args.max_refunds),
        max_tries=positive(args.max_tries, "--max-tries"),
        max_checks=max(0, args.max_checks),
        executor=setup.executor,
        require_isolation=not args.allow_unisolated,
        store=store,
    )


def banner(
    args: argparse.Namespace, port: int, setup: Setup, runner: Runner, state: Path, store: Store | None, tls: bool
) -> str:
    """The line saying the runner is up, and how it is set up."""
    host = args.listen.rsplit(":", 1)[0]
    return (
        f"arena runner on {host}:{port}: lanes {described_lanes(setup.lanes, setup.executor)}, "
        f"executor {args.executor}, "
        f"isolation {runner.isolation() or 'NONE'}, control groups {described_groups(setup.groups)}, "
        f"sandbox users {described_users(setup.users)}, "
        f"{len(setup.tokens)} token(s), state {state}, "
        f"scores {'REAPI ' + store.endpoint if isinstance(store, ReapiStore) else 'sqlite'}, "
        f"{'TLS' if tls else 'plaintext'}"
    )


def run(args: argparse.Namespace) -> int:
    from arena.api.transport import require_safe_listen

    log_to_stderr(args.log_level)
    credentials = tls_credentials(args)
    # Before anything starts: a refused address must not leave lanes and children behind.
    require_safe_listen(args.listen, tls=credentials is not None, insecure_listen=args.insecure_listen)
    setup = checked_setup(args)
    # Imported here: the server needs the generated arena.v1 modules, which exist only after
    # codegen; every other `arena` command (and --help) must work without them.
    from arena.api.server import create_server, serve

    state = args.state or runner_state()
    limits = call_limits(args)
    store = build_store(args, state)
    check_pool_access(setup.executor)
    sweep_run_folders()  # what runs killed before us left in the temporary directory
    runner = opened_runner(args, state, setup, store)
    try:
        server, port = create_server(
            args.listen,
            runner,
            setup.tokens,
            credentials=credentials,
            insecure_listen=args.insecure_listen,
            limits=limits,
        )
        print(banner(args, port, setup, runner, state, store, tls=credentials is not None), flush=True)
        serve(server)
    finally:
        runner.stop()
    print("arena runner stopped", file=sys.stderr)
    return 0
