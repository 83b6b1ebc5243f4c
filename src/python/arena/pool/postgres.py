"""A private PostgreSQL cluster for the pool's scheduler: BuildGrid 0.4.4 keeps its jobs, bots and
leases only in PostgreSQL (its SQL layer refuses SQLite), through psycopg2.

The cluster lives in one folder (made by initdb on first use, kept across restarts), listens on
a Unix socket in that folder and on no TCP address, and trusts local connections: only this
machine's users who can enter the folder reach it. PostgreSQL refuses to run as root; a root
`arena pool server` runs it in a user namespace as uid 65534 (mapped to root outside, so it can
still reach a folder under /root), which needs nothing but util-linux's `unshare`.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.errors import ArenaError
from arena.pool.processes import die_with_parent, stop_process

PORT = 5432  # names the socket file (.s.PGSQL.5432) in the cluster's own folder: no clash
USER = "arena"  # the cluster's superuser, the one BuildGrid connects as
DATABASE = "postgres"
_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes, with the socket's name


class PostgresError(ArenaError):
    """PostgreSQL is missing, or the cluster cannot be made or started."""


def binary(name: str, folder: Path | None = None) -> str:
    """`name` (initdb, postgres) from `folder`, PATH, or Debian's /usr/lib/postgresql/<newest>/bin."""
    if folder is not None:
        return str(folder / name)
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/" + name), key=lambda p: int(Path(p).parts[-3]))
    if versions:
        return versions[-1]
    raise PostgresError(
        f"PostgreSQL's {name} was not found (PATH, /usr/lib/postgresql/*/bin): install it "
        "(Debian: apt-get install postgresql) or give --postgres-bin DIR, or --database URL for a server of your own"
    )


def _as_cluster_user(argv: list[str]) -> list[str]:
    """PostgreSQL will not run as root: as root, run it as uid 65534 in a user namespace."""
    if os.geteuid() != 0:
        return argv
    return ["unshare", "--user", "--map-user=65534", "--map-group=65534", *argv]


@dataclass
class Postgres:
    """A started cluster; `url` is what BuildGrid's !sql-connection takes."""

    folder: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://{USER}@/{DATABASE}?host={self.folder}&port={PORT}"

    def stop(self) -> None:
        """Fast shutdown (SIGINT): open transactions roll back, the cluster is consistent on disk."""
        stop_process(self.process, signal.SIGINT)


def start_postgres(folder: Path, log: IO[bytes], bin_dir: Path | None = None, timeout_s: float = 60.0) -> Postgres:
    """Start the cluster in `folder` (initdb first when it holds none); returns once it accepts
    connections. It dies with this process (SIGINT when its parent goes)."""
    folder = folder.resolve()
    if len(str(folder)) + len(f"/.s.PGSQL.{PORT}") > _SOCKET_PATH_MAX:
        raise PostgresError(
            f"the folder {folder} is too long a path for PostgreSQL's Unix socket: use a shorter --state"
        )
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    if not (data / "PG_VERSION").exists():
        if data.exists():
            shutil.rmtree(data)  # a half-made cluster from an interrupted initdb
        made = subprocess.run(
            _as_cluster_user(
                [
                    binary("initdb", bin_dir),
                    "-D",
                    str(data),
                    "-U",
                    USER,
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-instructions",
                ]
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        if made.returncode != 0:
            raise PostgresError(f"initdb failed in {data} (exit {made.returncode}): see the log")
    argv = [binary("postgres", bin_dir), "-D", str(data), "-k", str(folder), "-p", str(PORT)]
    # No TCP address; commits do not wait for the disk (a crash may lose the last moments of
    # queue changes, never corrupt the cluster: the runner sends a lost job again).
    argv += ["-c", "listen_addresses=", "-c", "synchronous_commit=off", "-c", "max_connections=200"]
    process = subprocess.Popen(
        _as_cluster_user(argv),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=functools.partial(die_with_parent, signal.SIGINT, os.getpid()),
    )
    started = Postgres(folder, process)
    deadline = time.monotonic() + timeout_s
    while not _accepts(folder):
        if process.poll() is not None:
            raise PostgresError(f"PostgreSQL exited at start (exit {process.returncode}): see the log")
        if time.monotonic() > deadline:
            started.stop()
            raise PostgresError(f"PostgreSQL did not accept connections within {timeout_s:g} s")
        time.sleep(0.1)
    return started


def _accepts(folder: Path) -> bool:
    """True once the server answers on its socket (psycopg2, which BuildGrid uses too)."""
    import psycopg2

    if not (folder / f".s.PGSQL.{PORT}").exists():
        return False
    try:
        psycopg2.connect(host=str(folder), port=PORT, user=USER, dbname=DATABASE, connect_timeout=2).close()
    except psycopg2.OperationalError:
        return False
    return True
