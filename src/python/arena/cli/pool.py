"""`arena pool server [--listen HOST:PORT] [--state DIR] [--config TEMPLATE] [--database URL] ...`:
the GPU pool's server (BuildGrid: CAS, action cache, Execution, Bots, over a private PostgreSQL).
`arena pool token --role runner|worker [--state DIR] [--name NAME] [--days N] [--out FILE]`: a token the
server accepts for that role. `arena pool worker --server HOST:PORT --gpu N|cpu [--arena-gpu NAME]
[--token-file FILE] ...`: one worker (one per GPU) taking the pool's jobs through the Remote Workers
API. docs/executors.md, "The pool"."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from arena.environment.probe import child_users, sandbox_tool
from arena.environment.users import check_users
from arena.errors import ArenaError
from arena.limits.cpus import parsed
from arena.pool.tokens import ROLES, TOKEN_VARIABLE, mint, read_secret, read_token, write_token
from arena.runner.folders import state_root

HELP = "the GPU pool: its server (BuildGrid with its scheduler), its tokens and its workers (one per GPU)"
RUNS_WITHOUT_CHECKOUT = "always"  # neither the server nor a worker reads the repository
DEFAULT_LISTEN = "127.0.0.1:8980"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parts = parser.add_subparsers(dest="part", metavar="PART", required=True)
    _server_arguments(parts.add_parser("server", help="run the pool's server", description="run the pool's server"))
    _token_arguments(
        parts.add_parser(
            "token",
            help="print a token the pool's server accepts for a runner or a worker",
            description="print a token the pool's server accepts for a runner (arena serve --remote-token-file) "
            "or a worker (arena pool worker --token-file), signed with the secret in the server's state folder",
        )
    )
    _worker_arguments(
        parts.add_parser("worker", help="run one worker for one GPU", description="run one worker for one GPU")
    )


def _server_arguments(server: argparse.ArgumentParser) -> None:
    server.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT", help=f"default {DEFAULT_LISTEN}")
    server.add_argument(
        "--insecure-listen",
        action="store_true",
        help="allow an address beyond loopback without TLS: its tokens cross the network readable, "
        "keep it on a private network",
    )
    server.add_argument(
        "--tls-cert", type=Path, metavar="FILE", help="PEM certificate chain: serve TLS (with --tls-key)"
    )
    server.add_argument("--tls-key", type=Path, metavar="FILE", help="its PEM private key")
    server.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="its PostgreSQL cluster, CAS, tokens' secret and log "
        "(default $XDG_STATE_HOME/arena/pool: ~/.local/state/arena/pool)",
    )
    server.add_argument(
        "--config",
        type=Path,
        metavar="TEMPLATE",
        help="a BuildGrid configuration template (default: arena/pool/pool.yml)",
    )
    server.add_argument(
        "--database",
        default="",
        metavar="URL",
        help="postgresql+psycopg2://... of a server of your own (default: a private one in --state)",
    )
    server.add_argument(
        "--postgres-bin",
        type=Path,
        metavar="DIR",
        help="where initdb and postgres are (default: PATH, /usr/lib/postgresql)",
    )
    server.add_argument("--instance", default="", help="the REAPI instance name (default: none)")
    server.add_argument(
        "--keepalive-s", type=int, default=60, help="a worker silent this long is dead; its job runs elsewhere"
    )
    server.add_argument("--reap-s", type=float, default=5.0, help="how often the scheduler looks for dead workers")
    server.add_argument("--max-job-attempts", type=int, default=3, help="runs of one job whose workers die or fail it")


def _token_arguments(token: argparse.ArgumentParser) -> None:
    token.add_argument("--role", required=True, choices=ROLES, help="what its holder may do on the pool")
    token.add_argument("--state", type=Path, metavar="DIR", help="the server's --state (default as the server's)")
    token.add_argument("--name", default="", help="who holds it, in the server's log (default: the role)")
    token.add_argument("--days", type=float, default=30.0, help="how long it lasts (default 30)")
    token.add_argument(
        "--out", type=Path, metavar="FILE", help="write it to FILE, readable by you alone (default: print it)"
    )


def _worker_arguments(worker: argparse.ArgumentParser) -> None:
    worker.add_argument("--server", required=True, metavar="HOST:PORT", help="the pool server")
    worker.add_argument(
        "--tls-ca", type=Path, metavar="FILE", help="PEM file of the CA that signed the server's TLS certificate"
    )
    worker.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help=f"a worker's token from `arena pool token --role worker` (default: {TOKEN_VARIABLE})",
    )
    worker.add_argument("--gpu", required=True, metavar="N|cpu", help="the GPU index its jobs run on (cpu: none)")
    worker.add_argument(
        "--arena-gpu",
        metavar="NAME",
        help="the platform property arena-gpu it offers, the runner's --remote-gpu (default: the GPU's model)",
    )
    worker.add_argument(
        "--bot-id", default="", help="its name to the scheduler, kept across restarts (default HOST-gpuN)"
    )
    worker.add_argument("--instance", default="", help="the REAPI instance name (default: none)")
    worker.add_argument(
        "--image",
        default="",
        metavar="REPO@sha256:...",
        help="offer container-image=docker://REF (run the worker inside that image)",
    )
    worker.add_argument(
        "--work", type=Path, metavar="DIR", help="where jobs' input roots are laid out (default: the temporary folder)"
    )
    worker.add_argument(
        "--allow-unisolated",
        action="store_true",
        help="run commands where no bubblewrap sandbox can be made (util-linux namespaces only: they see "
        "this host's files as the worker's user): only for runners whose code you trust",
    )
    worker.add_argument(
        "--cpus",
        metavar="LIST",
        help="keep its jobs to these CPUs, e.g. 0-47 (those near its GPU), so workers on one host do not slow "
        "each other's timing; a job that leaves them is stopped (default: any)",
    )


def run(args: argparse.Namespace) -> int:
    return {"server": run_server, "token": run_token, "worker": run_worker}[args.part](args)


def pool_state(args: argparse.Namespace) -> Path:
    return (args.state or state_root() / "pool").resolve()


def run_token(args: argparse.Namespace) -> int:
    secret = read_secret(pool_state(args))
    token = mint(secret, args.role, args.name or args.role, args.days)
    if args.out is None:
        print(token)
    else:
        write_token(args.out, token)
    return 0


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    return stop


def run_server(args: argparse.Namespace) -> int:
    from arena.api.transport import is_loopback
    from arena.pem import read_pem
    from arena.pool.server import PoolSettings, pool_server

    if (args.tls_cert is None) != (args.tls_key is None):
        raise ArenaError("--tls-cert and --tls-key go together: give both files, or neither")
    if args.tls_cert is not None:  # BuildGrid reads them; a missing or wrong file is said here, first
        read_pem(args.tls_cert, "TLS certificate")
        read_pem(args.tls_key, "TLS private key")
    elif not args.insecure_listen and not is_loopback(args.listen):
        raise ArenaError(
            f"refusing to listen on {args.listen} in plaintext: its tokens would cross the network readable "
            "(whoever reads one can run commands on its workers). Give --tls-cert FILE and --tls-key FILE, "
            "listen on 127.0.0.1, or pass --insecure-listen on a private network"
        )
    if args.keepalive_s < 4:
        raise ArenaError(
            "--keepalive-s must be at least 4 (BuildGrid answers a worker's poll within 80% of it, at least 3 s)"
        )
    state = pool_state(args)
    template = args.config.read_text() if args.config is not None else None
    settings = PoolSettings(
        listen=args.listen,
        instance=args.instance,
        keepalive_s=args.keepalive_s,
        reap_s=args.reap_s,
        max_attempts=args.max_job_attempts,
        tls_cert=str(args.tls_cert.resolve()) if args.tls_cert else "",
        tls_key=str(args.tls_key.resolve()) if args.tls_key else "",
    )
    stop = _stop_on_signals()
    with pool_server(state, settings, template, args.database, args.postgres_bin) as server:
        database = "your database" if args.database else f"PostgreSQL in {state / 'postgres'}"
        print(
            f"arena pool server on {args.listen} ({'TLS' if args.tls_cert else 'plaintext'}): "
            f"instance '{args.instance}', {database}, state {state}, log {state / 'server.log'}; "
            f"tokens: arena pool token --state {state} --role runner|worker",
            flush=True,
        )
        while server.poll() is None and not stop.wait(0.5):
            pass
        if not stop.is_set():
            print(
                f"arena pool server: BuildGrid exited ({server.returncode}): see {state / 'server.log'}",
                file=sys.stderr,
            )
            return 1
    print("arena pool server stopped", file=sys.stderr)
    return 0


def run_worker(args: argparse.Namespace) -> int:
    from arena.pool.worker import Worker, WorkerSettings, gpu_name

    if args.gpu != "cpu" and not args.gpu.isdigit():
        raise ArenaError(f"--gpu takes a GPU index or cpu, not {args.gpu!r}")
    name = args.arena_gpu or gpu_name(args.gpu)
    if not name:
        raise ArenaError(
            f"cannot read GPU {args.gpu}'s model (nvidia-smi, rocm-smi): "
            "give --arena-gpu NAME, the runner's --remote-gpu"
        )
    try:
        cpus = parsed(args.cpus) if args.cpus else None
    except ValueError:
        cpus = frozenset()
    if cpus is not None and (not cpus or not cpus <= os.sched_getaffinity(0)):
        raise ArenaError(f"--cpus {args.cpus!r} is not a list of this machine's CPUs, such as 0-47 or 0-23,48-71")
    settings = WorkerSettings(
        server=args.server,
        gpu=args.gpu,
        gpu_name=name,
        bot_id=args.bot_id,
        instance=args.instance,
        image=args.image,
        work=args.work,
        cpus=cpus,
        token=read_token(args.token_file),
        tls_ca=args.tls_ca,
    )
    if sandbox_tool():  # its commands' users: a root worker refuses at start what it could not lease
        check_users(child_users())
    elif not args.allow_unisolated:
        who = "root" if os.geteuid() == 0 else "the worker's user"
        raise ArenaError(
            "no bubblewrap sandbox can be made here (install bubblewrap; it needs root or user namespaces): "
            f"every command would run as {who} with this host's files in view. Pass --allow-unisolated only "
            "for a pool whose runners send nothing but code you trust"
        )
    worker = Worker(settings, log=lambda line: print(line, flush=True))
    stop = _stop_on_signals()
    try:
        worker.serve(stop)
    finally:
        worker.close()
    print(f"arena pool worker {settings.name} stopped after {worker.leases_done} lease(s)", flush=True)
    return 0
