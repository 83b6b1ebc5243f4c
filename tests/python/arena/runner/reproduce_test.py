"""Reproduce: an operator has the runner run one of its finished evaluations again, past its score cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.errors import InvalidRequest, NotFound, PermissionDenied
from arena.evaluation.evaluation import Evaluation
from arena.runner.auth import Identity
from arena.runner.runner import Runner
from arena.task.digest import task_digest

ALICE = Identity("alice")
OPS = Identity("ops", operator=True)


class Recording:
    """The kit's fake evaluate, recording the task's real digest (as the pipeline does) and the
    store each run was handed."""

    def __init__(self, kit: Any) -> None:
        self.fake = kit.FakeEvaluate()
        self.stores: list[Any] = []

    def __call__(self, task: Any, candidate: Any, repo_root: Path, settings: Any, store: Any) -> Evaluation:
        self.stores.append(store)
        return replace(self.fake(task, candidate, repo_root, settings, store), task_digest=task_digest(task, repo_root))


def last(progress: Any) -> Evaluation:
    steps = list(progress)
    assert steps[-1].stage == "done" and steps[-1].evaluation is not None
    return steps[-1].evaluation


@pytest.fixture
def recording(kit: Any) -> Recording:
    return Recording(kit)


@pytest.fixture
def runner(repo: Path, make_runner, recording: Recording, tmp_path: Path) -> Runner:
    store = SqliteStore(tmp_path / "scores.sqlite")
    return make_runner(repo, recording, store=store)


def test_an_operator_runs_a_finished_evaluation_again_past_the_cache(runner: Runner, kit, recording) -> None:
    attempt = runner.open_attempt(ALICE, kit.SOFTMAX)
    stored = last(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    again = last(runner.reproduce(OPS, stored.id, "r1"))
    assert again.id != stored.id and (again.score.speedup, again.status) == (stored.score.speedup, stored.status)
    # Run again, and neither answered from the score cache nor kept in it.
    assert len(recording.fake.calls) == 2 and recording.stores[-1] is None
    assert runner.get_evaluation(OPS, stored.id) == stored  # the stored one is unchanged
    assert runner.get_evaluation(OPS, again.id) == again
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == attempt.iterations_left - 1  # nothing charged
    assert last(runner.reproduce(OPS, stored.id, "r1")).id == again.id  # the same request: the same run
    assert len(recording.fake.calls) == 2
    assert last(runner.reproduce(OPS, stored.id)).id not in (stored.id, again.id)  # no request id: a new run
    assert len(recording.fake.calls) == 3


def test_reproduce_is_refused_to_agents_for_checks_and_for_unknown_ids(runner: Runner, kit) -> None:
    attempt = runner.open_attempt(ALICE, kit.SOFTMAX)
    scored = last(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    check = last(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=3"), check=True))
    with pytest.raises(PermissionDenied, match="operators"):
        runner.reproduce(ALICE, scored.id)
    with pytest.raises(InvalidRequest, match="free check"):
        runner.reproduce(OPS, check.id)
    with pytest.raises(NotFound):
        runner.reproduce(OPS, "nosuch")


def test_an_evaluation_of_another_task_digest_is_not_run_again(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate())  # its evaluations record the digest "ttt...", not the task's
    stored = last(runner.evaluate(OPS, "", kit.candidate("speedup=2")))
    with pytest.raises(InvalidRequest, match="changed since"):
        runner.reproduce(OPS, stored.id)
