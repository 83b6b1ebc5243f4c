"""The runner's state: one SQLite file holding attempts, evaluation jobs and agents' accounting.

Every write is one transaction under one lock, so a budget check and the job it admits commit
together or not at all. WAL journaling with synchronous=FULL: a reply is sent only after the
transaction that accepted the job is on disk, so neither a crash nor a restart loses it.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from arena.errors import StateBusy

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    task TEXT NOT NULL,
    category TEXT NOT NULL,
    deadline_ms INTEGER NOT NULL,
    iterations_left INTEGER NOT NULL,
    submitted INTEGER NOT NULL DEFAULT 0,
    final_evaluation TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    checks_used INTEGER NOT NULL DEFAULT 0,  -- free checks spent (never iterations)
    finalized INTEGER NOT NULL DEFAULT 0     -- 1: the runner submitted the workspace's files (Finalize)
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- queue order
    id TEXT NOT NULL UNIQUE,                -- also the evaluation's id
    agent TEXT NOT NULL,
    attempt TEXT NOT NULL,                  -- '' outside any attempt
    task TEXT NOT NULL,
    candidate TEXT NOT NULL,                -- JSON: {"task", "files": {path: base64}}
    state TEXT NOT NULL,                    -- pending | running | done | failed
    claim TEXT NOT NULL DEFAULT '',         -- the worker run that owns a running job
    lane TEXT NOT NULL DEFAULT '',
    evaluation TEXT NOT NULL DEFAULT '',    -- JSON of Evaluation.to_dict() once done
    error_kind TEXT NOT NULL DEFAULT '',    -- the exception class name once failed
    error TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    finished_ms INTEGER NOT NULL DEFAULT 0,
    tries INTEGER NOT NULL DEFAULT 0,       -- runs that ended in a fault of the runner
    kind TEXT NOT NULL DEFAULT 'scored'     -- scored | check (compile and declared cases, free) | final (Finalize)
                                            -- | rerun (Reproduce: run again past the score cache)
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq);
CREATE INDEX IF NOT EXISTS jobs_by_agent_finish ON jobs (agent, finished_ms);  -- a job's turn (queue.py)
CREATE INDEX IF NOT EXISTS attempts_by_agent ON attempts (agent, task);
-- Iterations given back for jobs the runner failed, per agent and task (capped: runner.py).
CREATE TABLE IF NOT EXISTS refunds (
    agent TEXT NOT NULL,
    task TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (agent, task)
);
-- What an attempt's agent spent, as its operator recorded it (RecordUsage): one row per attempt.
CREATE TABLE IF NOT EXISTS usage (
    attempt TEXT PRIMARY KEY,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost_usd REAL,                          -- NULL: not known
    turns INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    recorded_ms INTEGER NOT NULL
);
-- The agent's event stream per attempt, kept gzip-compressed (accounting.py caps its size).
CREATE TABLE IF NOT EXISTS trajectories (
    attempt TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,                  -- bytes once decompressed
    gzip BLOB NOT NULL
);
"""


class Database:
    """A SQLite connection shared by the runner's threads, serialised by a lock."""

    def __init__(self, path: Path, durable: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # One runner per state file: a second would requeue the first one's running jobs.
        self._lock_fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            raise StateBusy(f"another runner uses the state in {path.parent}") from None
        self._lock = threading.RLock()
        # isolation_level=None: transactions are opened explicitly in `transaction`.
        self._connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._connection.row_factory = sqlite3.Row
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self._connection.executescript(SCHEMA)
        add_missing_columns(self._connection)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection for reads (each statement sees committed data)."""
        with self._lock:
            yield self._connection

    def close(self) -> None:
        with self._lock:
            if self._lock_fd >= 0:
                self._connection.close()
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = -1


# Columns added after the first schema: (table, column, declaration) for state files made before them.
ADDED_COLUMNS = (
    ("jobs", "tries", "INTEGER NOT NULL DEFAULT 0"),
    ("jobs", "kind", "TEXT NOT NULL DEFAULT 'scored'"),  # scored | check (a free check, never scored)
    ("attempts", "checks_used", "INTEGER NOT NULL DEFAULT 0"),
    ("attempts", "finalized", "INTEGER NOT NULL DEFAULT 0"),
)


def add_missing_columns(connection: sqlite3.Connection) -> None:
    for table, column, declaration in ADDED_COLUMNS:
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
