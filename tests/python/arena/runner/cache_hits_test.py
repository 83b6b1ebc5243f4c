"""A score already in the cache is answered in the Evaluate call, never behind a lane's work."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.errors import BudgetExhausted, NotFound
from arena.evaluation.evaluate import evaluate
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena_testing.fake_executor import FakeExecutor
from arena_testing.runner_kit import FakeEvaluate

ALICE = Identity("alice")
BOB = Identity("bob")
SOFTMAX = "tasks/triton2triton/softmax:softmax"


def test_a_cache_hit_does_not_wait_for_a_busy_lane(repo: Path, make_runner, kit, tmp_path: Path) -> None:
    executor = FakeExecutor([HarnessResult("PASSED", True, True)])
    store = SqliteStore(tmp_path / "scores.sqlite")
    runner = make_runner(repo, evaluate, settings=HarnessSettings(backend="cpu"), store=store, executor=executor)
    seeded = list(runner.evaluate(ALICE, runner.open_attempt(ALICE, SOFTMAX).id, kit.candidate("speedup=2")))
    assert [step.stage for step in seeded][-1] == "done" and executor.runs == 1

    executor.gate.clear()  # the lane's next job holds it until the gate opens
    busy = runner.evaluate(ALICE, runner.open_attempt(ALICE, SOFTMAX).id, kit.candidate("speedup=3"))
    assert next(busy).stage in ("queued", "running")
    queued = runner.evaluate(BOB, runner.open_attempt(BOB, SOFTMAX).id, kit.candidate("speedup=4"))
    assert next(queued).stage in ("queued", "running")  # a miss waits its turn

    bobs = runner.open_attempt(BOB, SOFTMAX)
    # Answered while the gate is shut: a hit that waited for the lane would wait for the gate.
    steps = list(runner.evaluate(BOB, bobs.id, kit.candidate("speedup=2")))
    assert [step.stage for step in steps] == ["done"] and steps[0].evaluation is not None
    assert steps[0].evaluation.cached and steps[0].evaluation.id == steps[0].evaluation_id
    assert executor.runs == 1  # the busy job still holds the lane, at the gate
    assert runner.get_attempt(BOB, bobs.id).iterations_left == 2  # a cached answer is an iteration
    assert runner.get_evaluation(BOB, steps[0].evaluation_id).cached
    runner.submit(BOB, bobs.id, steps[0].evaluation_id)  # and can be submitted
    executor.gate.set()


def test_a_fake_evaluate_gets_no_cache_lookup(repo: Path, make_runner, kit, tmp_path: Path) -> None:
    """The lookup is the pipeline's: a runner given another evaluate (a suite's, a test's) keys
    its cache its own way, so the runner does not guess at it."""
    fake = FakeEvaluate()
    store = SqliteStore(tmp_path / "scores.sqlite")
    runner = make_runner(repo, fake, settings=HarnessSettings(backend="cpu"), store=store)
    for agent in (ALICE, BOB):
        list(runner.evaluate(agent, runner.open_attempt(agent, SOFTMAX).id, kit.candidate("speedup=2")))
    assert len(fake.calls) == 2


def test_a_refused_candidate_leaves_no_files_in_the_score_cache(repo: Path, make_runner, kit, tmp_path: Path) -> None:
    """Before: the lookup kept the files before the attempt was checked, so calls refused for a
    made-up attempt or a spent one wrote 105 MB into the score cache in 100 calls, free."""
    executor = FakeExecutor([HarnessResult("PASSED", True, True)])
    store = SqliteStore(tmp_path / "scores.sqlite")
    runner = make_runner(repo, evaluate, settings=HarnessSettings(backend="cpu"), store=store, executor=executor)
    spent = runner.open_attempt(BOB, SOFTMAX).id
    for i in range(3):
        list(runner.evaluate(BOB, spent, kit.candidate(f"speedup={i + 1}")))
    refused = kit.candidate("speedup=9 " + "#" * 1000)
    with pytest.raises(NotFound):
        runner.evaluate(BOB, "no-such-attempt", refused)
    with pytest.raises(BudgetExhausted):
        runner.evaluate(BOB, spent, refused)
    assert store.kept(refused.digest, SOFTMAX) is None
    hit = list(runner.evaluate(ALICE, runner.open_attempt(ALICE, SOFTMAX).id, kit.candidate("speedup=2")))
    assert hit[-1].evaluation is not None and hit[-1].evaluation.cached  # an accepted hit
    assert store.kept(kit.candidate("speedup=2").digest, SOFTMAX) is not None
