"""Budgets that retrying cannot get around: attempts per agent and task, refunds per agent and
task, and a leaderboard that counts every closed attempt."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from arena.errors import BudgetExhausted, NoDevice
from arena.evaluation.evaluation import Evaluation
from arena.runner.auth import Identity
from arena.runner.records import Progress

ALICE = Identity("alice")
BOB = Identity("bob")
SOFTMAX = "tasks/triton2triton/softmax:softmax"
SCAN = "tasks/hip2hip/scan:scan"


def final(progress: Iterator[Progress]) -> Evaluation:
    steps = list(progress)
    assert steps[-1].evaluation is not None
    return steps[-1].evaluation


def test_attempts_per_agent_and_task_are_capped(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate(), max_attempts=2)
    runner.open_attempt(ALICE, SOFTMAX)
    runner.open_attempt(ALICE, "tasks/triton2triton/softmax")  # the same task by another spelling
    with pytest.raises(
        BudgetExhausted, match=r"opened 2 attempts on tasks/triton2triton/softmax:softmax.*max_attempts=2"
    ):
        runner.open_attempt(ALICE, SOFTMAX)
    # Other agents and other tasks are untouched.
    assert runner.open_attempt(BOB, SOFTMAX).iterations_left == 3
    assert runner.open_attempt(ALICE, SCAN).task == SCAN


def test_the_default_cap_is_a_few_attempts(repo: Path, make_runner, kit) -> None:
    from arena.runner.runner import MAX_ATTEMPTS

    runner = make_runner(repo, kit.FakeEvaluate())
    for _ in range(MAX_ATTEMPTS):
        runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(BudgetExhausted, match=f"max_attempts={MAX_ATTEMPTS}"):
        runner.open_attempt(ALICE, SOFTMAX)
    assert 1 <= MAX_ATTEMPTS <= 5


def test_refunds_for_failed_jobs_are_capped_per_agent_and_task(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate(fail_with=NoDevice("no GPU for this task"))
    runner = make_runner(repo, fake, max_refunds=2)
    first = runner.open_attempt(ALICE, SOFTMAX)
    second = runner.open_attempt(ALICE, SOFTMAX)
    for text in ("speedup=1", "speedup=2"):  # refunded: the cap is 2 per agent and task
        with pytest.raises(NoDevice):
            list(runner.evaluate(ALICE, first.id, kit.candidate(text)))
    assert runner.get_attempt(ALICE, first.id).iterations_left == 3
    with pytest.raises(NoDevice):  # beyond the cap, in another attempt on the same task: charged
        list(runner.evaluate(ALICE, second.id, kit.candidate("speedup=3")))
    assert runner.get_attempt(ALICE, second.id).iterations_left == 2
    bob = runner.open_attempt(BOB, SOFTMAX)  # another agent has its own refunds
    with pytest.raises(NoDevice):
        list(runner.evaluate(BOB, bob.id, kit.candidate("speedup=1")))
    assert runner.get_attempt(BOB, bob.id).iterations_left == 3
    assert len(fake.calls) == 4  # NoDevice would recur: no job ran twice


def test_a_fault_of_the_runner_runs_the_job_again_a_bounded_number_of_times(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate(fail_with=RuntimeError("a lane lost its machine"))
    runner = make_runner(repo, fake, max_tries=3)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(Exception, match="runner failed"):
        list(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert len(fake.calls) == 3 and len(set(fake.calls)) == 1
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3  # refunded (first refund)


def test_a_fault_that_clears_on_a_later_run_gives_the_candidates_result(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate()
    failures = [RuntimeError("lost"), RuntimeError("lost again")]

    def flaky(task, candidate, repo_root, settings, store):  # type: ignore[no-untyped-def]
        if failures:
            raise failures.pop(0)
        return fake(task, candidate, repo_root, settings, store)

    runner = make_runner(repo, flaky, max_tries=3)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    assert final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"))).score.speedup == 2
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2  # one iteration, however many runs


def test_the_leaderboard_counts_every_closed_attempt(repo: Path, make_runner, kit) -> None:
    now = [1000.0]
    runner = make_runner(repo, kit.FakeEvaluate(), clock=lambda: now[0])
    good = runner.open_attempt(ALICE, SOFTMAX)
    evaluation = final(runner.evaluate(ALICE, good.id, kit.candidate("speedup=3")))
    runner.submit(ALICE, good.id, evaluation.id)
    dropped = runner.open_attempt(ALICE, SOFTMAX)  # a worse result, never submitted
    final(runner.evaluate(ALICE, dropped.id, kit.candidate("speedup=0.5")))
    (row,) = runner.leaderboard(BOB)
    assert row.mean_score == 420 and row.tasks == 1  # the open attempt counts for nothing yet
    now[0] += 3600.5  # past the dropped attempt's deadline: it counts, as nothing delivered
    (row,) = runner.leaderboard(BOB)
    assert row.mean_score == 210 and row.compile_rate == 0.5 and row.mean_speedup == 3.0
