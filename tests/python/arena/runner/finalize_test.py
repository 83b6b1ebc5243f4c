"""Finalize: at the deadline, the runner's own evaluation of an attempt's files becomes its submission."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate
from arena.errors import AttemptOpen, BudgetExhausted, InvalidCandidate, NotReady, PermissionDenied, Unisolated
from arena.evaluation.evaluation import Evaluation
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.runner import Runner
from arena_testing.waiting import wait_until

ALICE = Identity("alice")
OPS = Identity("ops", operator=True)
SOFTMAX = "tasks/triton2triton/softmax:softmax"
HOUR_MS = 3600 * 1000


def done(runner: Runner, evaluation_id: str) -> Evaluation:
    """The evaluation once its job finished (the fake evaluate takes milliseconds)."""
    return wait_until(
        lambda: runner.get_evaluation(OPS, evaluation_id), f"evaluation {evaluation_id} to finish", ignoring=(NotReady,)
    )


@pytest.fixture
def clock() -> list[float]:
    return [1000.0]


@pytest.fixture
def fake(kit: Any) -> Any:
    return kit.FakeEvaluate()


@pytest.fixture
def runner(repo: Path, make_runner, fake, clock: list[float]) -> Runner:
    return make_runner(repo, fake, clock=lambda: clock[0])


def test_only_an_operator_may_finalize(runner: Runner, kit, clock: list[float]) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    clock[0] += 7200
    with pytest.raises(PermissionDenied, match="operators"):
        runner.finalize(ALICE, attempt.id, kit.candidate("speedup=3"), agent_ended=True)
    assert not runner.get_attempt(ALICE, attempt.id).submitted


def test_a_live_attempt_is_finalized_only_once_its_agent_ended(runner: Runner, kit, fake) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(AttemptOpen, match="deadline"):
        runner.finalize(OPS, attempt.id, kit.candidate("speedup=3"))
    assert not runner.get_attempt(ALICE, attempt.id).submitted and not fake.calls
    finalized = runner.finalize(OPS, attempt.id, kit.candidate("speedup=3"), agent_ended=True)
    assert finalized.submitted and finalized.finalized


def test_past_the_deadline_the_files_are_evaluated_and_submitted_without_spending_an_iteration(
    runner: Runner, kit, fake, clock: list[float]
) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    for speedup in ("1.1", "1.2", "1.3"):  # every iteration spent, none submitted
        list(runner.evaluate(ALICE, attempt.id, kit.candidate(f"speedup={speedup}")))
    clock[0] += 3601
    with pytest.raises(BudgetExhausted, match="deadline"):
        runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=4"))  # the agent itself is refused now
    finalized = runner.finalize(OPS, attempt.id, Candidate(task="", files={"kernel.py": b"speedup=4"}))
    assert finalized.submitted and finalized.finalized and finalized.agent == "alice"
    assert finalized.iterations_left == 0  # nothing spent, and nothing needed
    evaluation = done(runner, finalized.final_evaluation)
    assert evaluation.score.speedup == 4.0 and fake.calls[-1][1] == kit.candidate("speedup=4").digest
    assert runner.get_evaluation(ALICE, finalized.final_evaluation) == evaluation  # the agent's to read
    assert runner.get_attempt(ALICE, attempt.id) == finalized
    (row,) = runner.leaderboard(ALICE)
    assert row.mean_speedup == 4.0 and row.mean_evaluations == 3.0  # the final evaluation is not one of them


def test_a_submitted_attempt_is_left_as_it_is(runner: Runner, kit, fake, clock: list[float]) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    chosen = list(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))[-1].evaluation_id
    submitted = runner.submit(ALICE, attempt.id, chosen)
    clock[0] += 7200
    calls = len(fake.calls)
    assert runner.finalize(OPS, attempt.id, kit.candidate("speedup=9")) == submitted
    assert len(fake.calls) == calls and not submitted.finalized
    assert runner.get_attempt(ALICE, attempt.id).final_evaluation == chosen


def test_files_outside_the_allow_list_are_refused(runner: Runner, clock: list[float]) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    clock[0] += 7200
    with pytest.raises(InvalidCandidate):
        runner.finalize(OPS, attempt.id, Candidate(task="", files={"exemplars/fast/kernel.py": b"x"}))
    assert not runner.get_attempt(ALICE, attempt.id).submitted


def test_a_final_evaluation_the_runner_failed_reopens_the_attempt(
    repo: Path, make_runner, kit, clock: list[float]
) -> None:
    fake = kit.FakeEvaluate(fail_with=ValueError("lane on fire"))
    runner = make_runner(repo, fake, clock=lambda: clock[0], max_tries=1)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    clock[0] += 7200
    finalized = runner.finalize(OPS, attempt.id, kit.candidate("speedup=3"))
    with pytest.raises(Exception, match="failed to evaluate"):
        done(runner, finalized.final_evaluation)
    reopened = runner.get_attempt(ALICE, attempt.id)
    assert not reopened.submitted and not reopened.finalized and reopened.iterations_left == 3  # nothing refunded
    fake.fail_with = None
    again = runner.finalize(OPS, attempt.id, kit.candidate("speedup=3"))
    assert again.submitted and done(runner, again.final_evaluation).score.speedup == 3.0


def test_a_cached_score_is_the_verdict_without_running(repo: Path, make_runner, kit, fake, tmp_path: Path,
                                                        clock: list[float]) -> None:  # fmt: skip
    def lookup(task, candidate, *rest):  # type: ignore[no-untyped-def]
        return kit.fake_evaluation(task, candidate)

    runner = make_runner(repo, fake, clock=lambda: clock[0], settings=HarnessSettings(),
                         store=SqliteStore(tmp_path / "scores.sqlite"), lookup=lookup)  # fmt: skip
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    clock[0] += 7200
    finalized = runner.finalize(OPS, attempt.id, kit.candidate("speedup=5"))
    evaluation = runner.get_evaluation(OPS, finalized.final_evaluation)  # done in the call itself
    assert evaluation.score.speedup == 5.0 and evaluation.id == finalized.final_evaluation and not fake.calls
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3


class Unsandboxed:
    """An executor that isolates nothing (its runs are the fake evaluate's)."""

    def isolation(self) -> str:
        return ""

    def environment(self, base):  # type: ignore[no-untyped-def]
        return base


def test_an_agents_files_need_the_sandbox_its_evaluations_would(repo: Path, make_runner, kit, fake) -> None:
    def evaluate(task, candidate, repo_root, settings, store, **_):  # type: ignore[no-untyped-def]
        return fake(task, candidate, repo_root, settings, store)

    runner = make_runner(repo, evaluate, executor=Unsandboxed(), require_isolation=True)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(Unisolated, match="no sandbox"):
        runner.finalize(OPS, attempt.id, kit.candidate("speedup=2"), agent_ended=True)
    assert not runner.get_attempt(ALICE, attempt.id).submitted and not fake.calls
    own = runner.open_attempt(OPS, SOFTMAX)  # an operator's own attempt runs as its own evaluations do
    assert runner.finalize(OPS, own.id, kit.candidate("speedup=2"), agent_ended=True).finalized
