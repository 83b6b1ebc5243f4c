"""Faults are never cached or charged: the real evaluate behind the runner, with a fake executor
that simulates each fault of the machine (no signed result, a kill from outside, a lost executor)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.errors import JobFailed
from arena.evaluation.evaluate import evaluate
from arena.evaluation.evaluation import Evaluation
from arena.executors.base import ExecutorError
from arena.harness.job import CANDIDATE_MARK, failure, without_result
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.records import Progress
from arena_testing.fake_executor import FakeExecutor

ALICE = Identity("alice")
BOB = Identity("bob")
SOFTMAX = "tasks/triton2triton/softmax:softmax"
PASSED = HarnessResult("PASSED", True, True)
# What harness/launch.py and harness/job.py return when no signed result came back.
KILLED = failure("RUNTIME_ERROR", "the child was killed by SIGKILL without a result", "--- stderr ---\n", fault=True)
EXITED = failure("RUNTIME_ERROR", "the child exited with code 1 without a result", fault=True)
LOST_FRAME = failure("RUNTIME_ERROR", "the child ended without a result", fault=True)
# A judge that ended without a frame before any candidate code ran (no mark), and after (the mark).
ENDED_BEFORE = without_result("was killed by SIGKILL", frozenset(), "--- stderr ---\n")
ENDED_WITH_CANDIDATE = without_result("was killed by SIGKILL", frozenset({CANDIDATE_MARK}), "--- stderr ---\n")


def final(progress: Iterator[Progress]) -> Evaluation:
    steps = list(progress)
    assert steps[-1].evaluation is not None
    return steps[-1].evaluation


@pytest.fixture
def real_runner(repo: Path, make_runner, tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(executor: FakeExecutor, **options):  # type: ignore[no-untyped-def]
        store = SqliteStore(tmp_path / "scores.sqlite")
        settings = HarnessSettings(backend="cpu")
        return make_runner(repo, evaluate, settings=settings, store=store, executor=executor, **options), store

    return make


@pytest.mark.parametrize(
    "fault", [KILLED, EXITED, LOST_FRAME, ENDED_BEFORE, ExecutorError("the REAPI pool failed: UNAVAILABLE")]
)
def test_a_fault_is_retried_then_failed_uncharged_and_never_cached(real_runner, kit, fault) -> None:
    executor = FakeExecutor([fault])
    runner, store = real_runner(executor, max_tries=3)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(JobFailed) as raised:
        list(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert executor.runs == 3
    assert "candidate" not in type(raised.value).__name__.lower()
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3  # not charged
    # Nothing was stored as the candidate's verdict: another agent's identical candidate runs.
    executor.outcomes = [PASSED]
    bobs = runner.open_attempt(BOB, SOFTMAX)
    evaluation = final(runner.evaluate(BOB, bobs.id, kit.candidate("speedup=2")))
    assert evaluation.correct and not evaluation.cached and executor.runs == 4


def test_a_fault_then_a_signed_result_gives_the_signed_one(real_runner, kit) -> None:
    executor = FakeExecutor([KILLED, PASSED])
    runner, _ = real_runner(executor)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    evaluation = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert evaluation.correct and executor.runs == 2
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2


def test_a_signed_failure_is_the_candidates_and_is_cached(real_runner, kit) -> None:
    """A crash the harness reported (signed, with its stage) is a verdict: charged and cached."""
    signed = HarnessResult(
        "RUNTIME_ERROR", True, False, errors=("first call: the candidate's worker killed by SIGKILL",)
    )
    executor = FakeExecutor([signed])
    runner, _ = real_runner(executor)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    evaluation = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert evaluation.status.value == "RUNTIME_ERROR" and executor.runs == 1
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2
    bobs = runner.open_attempt(BOB, SOFTMAX)
    assert final(runner.evaluate(BOB, bobs.id, kit.candidate("speedup=2"))).cached and executor.runs == 1


def test_a_judge_that_ended_with_the_candidates_code_running_is_charged_not_retried(real_runner, kit) -> None:
    """Its worker cannot signal the judge (harness/apart.py): whatever ended the judge came while the
    candidate's code ran (its memory, what it left running). The candidate's verdict, not a fault."""
    executor = FakeExecutor([ENDED_WITH_CANDIDATE, PASSED])
    runner, _ = real_runner(executor, max_tries=3)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    evaluation = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert evaluation.status.value == "RUNTIME_ERROR" and executor.runs == 1  # not run again
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2  # charged
