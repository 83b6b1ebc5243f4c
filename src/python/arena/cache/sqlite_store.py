"""The default score cache: one SQLite file, safe to share between processes on one machine.

Every row is sealed (seal.py) with the key in scores.key beside the file; a row whose seal does
not open (written without the key) reads as a miss.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from arena.cache.blobs import FOLDER_NAME, CandidateStore
from arena.cache.seal import load_key, opens, seal
from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evaluations (
    key TEXT PRIMARY KEY,
    evaluation TEXT NOT NULL,
    task TEXT NOT NULL,
    task_digest TEXT NOT NULL,
    created INTEGER NOT NULL,
    seal TEXT
);
CREATE INDEX IF NOT EXISTS evaluations_by_task ON evaluations (task, created);
"""
KEY_NAME = "scores.key"  # beside the database, readable by its owner only
# Writers wait this long for another process's lock before failing.
_BUSY_TIMEOUT_S = 30.0


class SqliteStore:
    """get/put/list_by_task over an SQLite file in WAL mode (readers never block the writer).

    Each call opens its own connection, so a store may be used from several threads and the file
    from several processes at once.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.candidates = CandidateStore(self.path.parent / FOLDER_NAME)  # kept files, by digest
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._key = load_key(self.path.parent / KEY_NAME)
        with closing(self._connect()) as db:
            _write_ahead(db)
            with db:
                db.executescript(_SCHEMA)
                columns = {row[1] for row in db.execute("PRAGMA table_info(evaluations)")}
                if "seal" not in columns:  # a cache from before rows were sealed: its rows read as misses
                    db.execute("ALTER TABLE evaluations ADD COLUMN seal TEXT")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
        return db

    def get(self, key: str) -> Evaluation | None:
        with closing(self._connect()) as db:
            row = db.execute("SELECT key, evaluation, seal FROM evaluations WHERE key = ?", (key,)).fetchone()
        return self._open(row)

    def _open(self, row: tuple[str, str, str | None] | None) -> Evaluation | None:
        """The row's evaluation if its seal opens with this store's key; else None (a miss)."""
        if row is None or not opens(self._key, row[0], row[1].encode(), row[2]):
            return None
        return Evaluation.from_dict(json.loads(row[1]))

    def put(self, key: str, evaluation: Evaluation) -> None:
        """Store (or replace) the evaluation under `key`; it is stored as not cached."""
        text = json.dumps({**evaluation.to_dict(), "cached": False}, sort_keys=True)
        created = evaluation.created_unix_ms or int(time.time() * 1000)
        with closing(self._connect()) as db:
            db.execute(
                "INSERT OR REPLACE INTO evaluations (key, evaluation, task, task_digest, created, seal) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, text, evaluation.task, evaluation.task_digest, created, seal(self._key, key, text.encode())),
            )

    def list_by_task(self, task: str) -> tuple[Evaluation, ...]:
        """Every stored evaluation of the task at `task` (its address), oldest first."""
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT key, evaluation, seal FROM evaluations WHERE task = ? ORDER BY created, key", (task,)
            ).fetchall()
        return tuple(e for e in map(self._open, rows) if e is not None)

    def find(self, reference: str) -> Evaluation | None:
        """The evaluation stored under the key `reference`, else the newest with that id."""
        with closing(self._connect()) as db:
            row = db.execute(
                "SELECT key, evaluation, seal FROM evaluations WHERE key = ? OR json_extract(evaluation, '$.id') = ? "
                "ORDER BY key = ? DESC, created DESC LIMIT 1",
                (reference, reference, reference),
            ).fetchone()
        return self._open(row)

    def keep(self, candidate: Candidate) -> None:
        """Keep the candidate's files beside the database (blobs/), so it can be run again."""
        self.candidates.put(candidate)

    def kept(self, digest: str, task: str) -> Candidate | None:
        """The kept candidate with `digest`, as a candidate for `task`; None if not kept."""
        return self.candidates.get(digest, task)


def _write_ahead(db: sqlite3.Connection) -> None:
    """The file in WAL mode (kept by the file once set). Switching needs the file alone, and while
    another process is creating it SQLite answers "database is locked" at once, without waiting
    out the busy timeout: so it is asked again until that timeout has passed."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
