"""The candidate store beside the score cache: content-addressed, verified on read."""

from __future__ import annotations

from pathlib import Path

from arena.cache.blobs import CandidateStore
from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate

TASK = "tasks/x/y:y"


def test_a_kept_candidate_comes_back_whole_and_shares_file_blobs(tmp_path: Path) -> None:
    store = CandidateStore(tmp_path / "blobs")
    one = Candidate(TASK, {"kernel.py": b"a = 1\n", "util/helper.py": b"same\n"})
    two = Candidate(TASK, {"kernel.py": b"a = 2\n", "util/helper.py": b"same\n"})
    assert store.put(one) == one.digest
    store.put(two)
    assert store.get(one.digest, TASK) == one
    assert store.get(two.digest, "tasks/other:other") == Candidate("tasks/other:other", two.files)
    assert len(list((tmp_path / "blobs" / "files").iterdir())) == 3  # helper.py stored once


def test_a_missing_or_damaged_candidate_is_none(tmp_path: Path) -> None:
    store = CandidateStore(tmp_path / "blobs")
    candidate = Candidate(TASK, {"kernel.py": b"a = 1\n"})
    digest = store.put(candidate)
    assert store.get("0" * 64, TASK) is None
    (blob,) = (tmp_path / "blobs" / "files").iterdir()
    blob.write_bytes(b"a = 666\n")
    assert store.get(digest, TASK) is None


def test_an_sqlite_cache_keeps_candidates_beside_itself(tmp_path: Path) -> None:
    scores = SqliteStore(tmp_path / "cache" / "scores.sqlite")
    assert scores.candidates.root == tmp_path / "cache" / "blobs"
    candidate = Candidate(TASK, {"kernel.py": b"b = 1\n"})
    assert scores.kept(candidate.digest, TASK) is None
    scores.keep(candidate)
    assert scores.kept(candidate.digest, TASK) == candidate
    assert scores.candidates.get(candidate.digest, TASK) == candidate
