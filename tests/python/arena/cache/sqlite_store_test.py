import multiprocessing
from pathlib import Path

from arena.cache.sqlite_store import SqliteStore
from arena.evaluation.evaluation import Evaluation, Status
from arena.scoring.records import CaseResult, Score, Timing


def _evaluation(task: str = "tasks/t/a:a", digest: str = "d1", created: int = 1000) -> Evaluation:
    return Evaluation(
        id="e1",
        task=task,
        task_digest=digest,
        candidate_digest="c",
        status=Status.PASSED,
        compiled=True,
        correct=True,
        cases=(CaseResult("big", True, True, baseline=Timing(1, 1, 1, 0, 1, 1, 3), speedup=1.5),),
        score=Score(points=270.0, speedup=1.5, fast_p={"1.0": True}),
        created_unix_ms=created,
    )


def test_put_get_round_trip_and_miss(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "deep" / "scores.sqlite")
    assert store.get("k") is None
    store.put("k", _evaluation())
    assert store.get("k") == _evaluation()
    assert store.get("other") is None
    # A second store on the same file sees it (a second process would too).
    assert SqliteStore(tmp_path / "deep" / "scores.sqlite").get("k") == _evaluation()


def test_stored_evaluations_are_not_marked_cached(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite")
    from dataclasses import replace

    store.put("k", replace(_evaluation(), cached=True))
    got = store.get("k")
    assert got is not None and got.cached is False


def test_list_by_task_oldest_first(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite")
    store.put("k2", _evaluation(digest="d2", created=2000))
    store.put("k1", _evaluation(digest="d1", created=1000))
    store.put("k3", _evaluation(task="tasks/t/b:b"))
    assert [e.task_digest for e in store.list_by_task("tasks/t/a:a")] == ["d1", "d2"]
    assert store.list_by_task("tasks/none:none") == ()


def test_wal_mode(tmp_path: Path) -> None:
    import sqlite3

    SqliteStore(tmp_path / "s.sqlite")
    assert sqlite3.connect(tmp_path / "s.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _write_many(path: str, worker: int) -> None:
    store = SqliteStore(Path(path))
    for index in range(40):
        store.put(f"{worker}-{index}", _evaluation(digest=f"{worker}-{index}", created=index))


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_many, args=(path, w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert len(SqliteStore(Path(path)).list_by_task("tasks/t/a:a")) == 160


def test_a_row_changed_or_written_without_the_key_is_a_miss(tmp_path: Path) -> None:
    # The attack: code that reaches the file (not its key) rewrites a row to a forged score.
    import json
    import sqlite3
    import stat

    store = SqliteStore(tmp_path / "s.sqlite")
    store.put("k", _evaluation())
    key_file = tmp_path / "scores.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 32
    forged = json.dumps({**_evaluation().to_dict(), "score": {"points": 99999.0}})
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        db.execute("UPDATE evaluations SET evaluation = ? WHERE key = 'k'", (forged,))
        db.execute(
            "INSERT INTO evaluations (key, evaluation, task, task_digest, created, seal) VALUES (?, ?, ?, ?, ?, ?)",
            ("k2", forged, "tasks/t/a:a", "d1", 1, "0" * 64),
        )
    assert store.get("k") is None and store.get("k2") is None
    assert store.find("e1") is None and store.list_by_task("tasks/t/a:a") == ()
    store.put("k", _evaluation())  # evaluated again, sealed again
    assert store.get("k") == _evaluation()


def test_a_row_does_not_open_under_another_key(tmp_path: Path) -> None:
    import sqlite3

    store = SqliteStore(tmp_path / "s.sqlite")
    store.put("k1", _evaluation())
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # a valid row moved to another cache key
        db.execute("UPDATE evaluations SET key = 'k2' WHERE key = 'k1'")
    assert store.get("k2") is None


def test_a_cache_from_before_seals_reads_as_misses(tmp_path: Path) -> None:
    import sqlite3

    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        db.execute(
            "CREATE TABLE evaluations (key TEXT PRIMARY KEY, evaluation TEXT NOT NULL, task TEXT NOT NULL, "
            "task_digest TEXT NOT NULL, created INTEGER NOT NULL)"
        )
        db.execute("INSERT INTO evaluations VALUES ('k', '{}', 't', 'd', 1)")
    store = SqliteStore(tmp_path / "s.sqlite")
    assert store.get("k") is None
    store.put("k", _evaluation())
    assert store.get("k") == _evaluation()
