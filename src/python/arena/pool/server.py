"""The pool's server: BuildGrid's own execution service and scheduler, its CAS and action cache,
from the configuration template beside this module (pool.yml), over a private PostgreSQL.

`serve_pool` starts PostgreSQL (unless given a database URL), brings its schema to BuildGrid's
head (`bgd migrate apply`), makes the tokens' secret (once) and the access list
(arena/pool/tokens.py), writes the filled configuration into the state folder, runs `bgd server
start` on it as a child process and waits for it: until a signal, or until the server exits.
Both children die with this process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import IO, Iterator

from arena.errors import ArenaError
from arena.pool.postgres import Postgres, start_postgres
from arena.pool.processes import die_with_parent, stop_process
from arena.pool.tokens import ACL_NAME, SECRET_NAME, acl_text, ensure_secret

TEMPLATE = Path(__file__).with_name("pool.yml")
BGD = "from buildgrid.server.app.cli import cli; cli()"  # the `bgd` console script, run by this Python


@dataclass(frozen=True)
class PoolSettings:
    listen: str = "127.0.0.1:8980"  # the one address of every service (REAPI, Bots)
    instance: str = ""  # the REAPI instance name jobs and bots use
    keepalive_s: int = 60  # a bot silent this long is dead and its lease is requeued
    reap_s: float = 5.0  # how often the scheduler looks for dead bots
    max_attempts: int = 3  # runs of one job whose bots die or fail it
    max_execution_s: int = 7200  # the longest a job may run on a bot
    tls_cert: str = ""  # PEM certificate chain and its key: TLS on `listen` (neither: plaintext)
    tls_key: str = ""


def render(template: str, settings: PoolSettings, database: str, state: Path) -> str:
    """The configuration: `template`'s ${...} fields filled (an unknown field is an error); the
    CAS, the tokens' secret and the access list are in `state`."""
    fields = {
        "listen": settings.listen,
        "instance": settings.instance,
        "keepalive_s": str(settings.keepalive_s),
        "reap_s": f"{settings.reap_s:g}",
        "max_attempts": str(settings.max_attempts),
        "max_execution_s": str(settings.max_execution_s),
        "database": database,
        "cas": str(state / "cas"),
        "secret": str(state / SECRET_NAME),
        "acl": str(state / ACL_NAME),
        "insecure": "false" if settings.tls_cert else "true",
        "tls_cert": settings.tls_cert,
        "tls_key": settings.tls_key,
    }
    try:
        return Template(template).substitute(fields)
    except (KeyError, ValueError) as error:
        raise ArenaError(f"the pool's configuration template has an unknown or broken field: {error}") from None


def migrate(database: str, log: IO[bytes]) -> None:
    """Bring the database's schema to BuildGrid's head: its own `bgd migrate apply` (alembic)."""
    done = subprocess.run(
        [sys.executable, "-c", BGD, "migrate", "apply", database],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise ArenaError(f"`bgd migrate apply` failed (exit {done.returncode}): see the server's log")


def wait_until_ready(server: subprocess.Popen[bytes], settings: PoolSettings, timeout_s: float) -> None:
    """Until the server answers on settings.listen; ArenaError when it exits first or takes longer
    than `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not _answers(settings):
        if server.poll() is not None:
            raise ArenaError(f"the BuildGrid server exited at start (exit {server.returncode}): see its log")
        if time.monotonic() > deadline:
            raise ArenaError(f"the BuildGrid server did not answer on {settings.listen} within {timeout_s:g} s")
        time.sleep(0.1)


def _answers(settings: PoolSettings) -> bool:
    """A gRPC handshake in plaintext; over TLS, an accepted connection (its certificate may chain
    to a CA this process does not hold)."""
    if settings.tls_cert:
        return _accepts(settings.listen)
    import grpc

    with grpc.insecure_channel(settings.listen) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=0.5)
            return True
        except grpc.FutureTimeoutError:
            return False


def _accepts(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def pool_server(
    state: Path,
    settings: PoolSettings,
    template: str | None = None,
    database: str = "",
    postgres_bin: Path | None = None,
    log: IO[bytes] | None = None,
    timeout_s: float = 120.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """A running pool server (the `bgd` child), answering on settings.listen; stopped on exit."""
    state.mkdir(parents=True, exist_ok=True)
    out = log if log is not None else (state / "server.log").open("ab")
    postgres: Postgres | None = None
    server: subprocess.Popen[bytes] | None = None
    try:
        if not database:
            postgres = start_postgres(state / "postgres", out, postgres_bin)
            database = postgres.url
        migrate(database, out)
        ensure_secret(state)
        (state / ACL_NAME).write_text(acl_text(settings.instance))
        config = state / "bgd.yml"
        text = render(template if template is not None else TEMPLATE.read_text(), settings, database, state)
        config.write_text(text)
        os.chmod(config, 0o600)  # it names the database
        server = subprocess.Popen(
            [sys.executable, "-c", BGD, "server", "start", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=functools.partial(die_with_parent, signal.SIGTERM, os.getpid()),
        )
        wait_until_ready(server, settings, timeout_s)
        yield server
    finally:
        if server is not None:
            stop_process(server)
        if postgres is not None:
            postgres.stop()
        if log is None:
            out.close()
