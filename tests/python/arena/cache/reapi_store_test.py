"""The score cache over a REAPI action cache + CAS: against a real BuildGrid server on loopback."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Iterator

import pytest

from arena.evaluation.evaluation import Evaluation, Status
from arena.scoring.records import Score
from arena_testing.buildgrid_server import buildgrid_server

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("buildgrid") is None,
    reason="the optional `buildgrid` package (REAPI messages and a server) is not installed",
)

SECRET = b"runner-pool-secret-0123456789"
TINY_BUILD = """
kernel_task(
    name="y",
    category="triton2triton",
    description="d",
    baseline=["k.py"],
    entry="k.py:f",
    signature="f(x: [N] float32) -> [N] float32",
    inputs=[{"name": "x", "shape": ["N"]}],
    outputs=[{"name": "y", "shape": ["N"]}],
    cases=[{"name": "c", "dims": {"N": 4}, "dtype": "float32", "seed": 1, "timed": True}],
)
"""


@pytest.fixture
def buildgrid(tmp_path: Path) -> Iterator[str]:
    """A BuildGrid server (CAS, ByteStream, action cache; instance `arena`) on 127.0.0.1."""
    with buildgrid_server(tmp_path) as endpoint:
        yield endpoint


def evaluation(id: str, points: float) -> Evaluation:
    return Evaluation(id, "tasks/x/y:y", "t" * 64, "c" * 64, Status.PASSED, True, True, score=Score(points=points))


def test_put_then_get_round_trips_through_the_action_cache(buildgrid: str) -> None:
    from arena.cache.reapi_store import ReapiStore

    store = ReapiStore(buildgrid, SECRET, "arena")
    try:
        assert store.get("k1") is None
        store.put("k1", evaluation("e1", 150.0))
        assert store.get("k1") == evaluation("e1", 150.0)
        assert store.get("k2") is None
        store.put("k1", evaluation("e2", 170.0))  # a replacement wins
        assert store.get("k1") == evaluation("e2", 170.0)
    finally:
        store.close()
    again = ReapiStore(buildgrid, SECRET, "arena")  # another client (another machine) sees the same scores
    try:
        got = again.get("k1")
        assert got is not None and got.id == "e2" and not got.cached
    finally:
        again.close()


def test_the_key_is_the_action_digest_and_large_blobs_stream(buildgrid: str) -> None:
    import grpc

    from arena.cache.reapi_store import ReapiStore
    from arena.reapi.cas import Cas, digest_of

    store = ReapiStore(buildgrid, SECRET, "arena")
    try:
        digest, blobs = store._action("k3")
        assert digest == digest_of(blobs[-1])  # the Action's own digest addresses the entry
        assert store._action("k3")[0] == digest and store._action("k4")[0] != digest
        with grpc.insecure_channel(buildgrid) as channel:
            cas = Cas(channel, "arena")
            big = bytes(range(256)) * 20000  # 5 MB: ByteStream, not a batch
            cas.upload([big, b"small"])
            assert cas.download(digest_of(big)) == big
            assert cas.download(digest_of(b"small")) == b"small"
    finally:
        store.close()


def test_evaluate_uses_it_as_its_store(buildgrid: str, tmp_path: Path) -> None:
    """The pipeline's second call is answered from the shared cache, marked cached."""
    from arena.cache.reapi_store import ReapiStore
    from arena.evaluation.evaluate import evaluate
    from arena.harness.result import HarnessResult
    from arena.harness.settings import HarnessSettings
    from arena.task.load import load_task

    repo = tmp_path / "repo"
    task_dir = repo / "tasks" / "x" / "y"
    task_dir.mkdir(parents=True)
    (repo / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(TINY_BUILD)
    (task_dir / "k.py").write_text("def f(x):\n    return x\n")
    task = load_task(repo, "tasks/x/y")
    runs: list[int] = []

    def runner(*_: object) -> HarnessResult:
        runs.append(1)
        return HarnessResult(status="PASSED", compiled=True, correct=True)

    store = ReapiStore(buildgrid, SECRET, "arena")
    try:
        first = evaluate(task, None, repo, HarnessSettings(), store, runner=runner)
        second = evaluate(task, None, repo, HarnessSettings(), store, runner=runner)
    finally:
        store.close()
    assert len(runs) == 1 and second.cached and second.id == first.id


def test_a_row_written_without_the_secret_is_a_miss(buildgrid: str) -> None:
    from arena.cache.reapi_store import ReapiStore

    honest = ReapiStore(buildgrid, SECRET, "arena")
    forger = ReapiStore(buildgrid, b"a-guess-at-the-pool-secret", "arena")
    try:
        forger.put("k1", evaluation("forged", 99999.0))
        assert honest.get("k1") is None  # a forged row never reads as a score
        honest.put("k1", evaluation("e1", 150.0))
        assert honest.get("k1") == evaluation("e1", 150.0)
        assert forger.get("k1") is None
        with pytest.raises(ValueError, match="secret"):
            ReapiStore(buildgrid, b"short", "arena")
    finally:
        honest.close()
        forger.close()


def test_candidates_are_kept_in_the_cas_and_checked_on_the_way_back(buildgrid: str) -> None:
    from arena.cache.reapi_store import ReapiStore
    from arena.candidate.candidate import Candidate

    store = ReapiStore(buildgrid, SECRET, "arena")
    try:
        candidate = Candidate("tasks/x/y:y", {"k.py": b"def f(x):\n    return x\n", "lib/u.py": b"u = 1\n"})
        assert store.kept(candidate.digest, "tasks/x/y:y") is None
        store.keep(candidate)
        assert store.kept(candidate.digest, "tasks/x/y:y") == candidate
        assert store.kept("0" * 64, "tasks/x/y:y") is None
    finally:
        store.close()
