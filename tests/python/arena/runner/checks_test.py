"""Free checks: an agent's local test through the runner, never a scored evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.errors import BudgetExhausted, InvalidRequest
from arena.evaluation.evaluation import Evaluation
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.records import Progress
from arena.runner.runner import MAX_CHECKS, job_id

ALICE = Identity("alice")
SOFTMAX = "tasks/triton2triton/softmax:softmax"


def final(progress: Iterator[Progress]) -> Evaluation:
    steps = list(progress)
    assert steps[-1].stage == "done" and steps[-1].evaluation is not None
    return steps[-1].evaluation


class Recording:
    """The fake evaluate, keeping the settings each job ran with."""

    def __init__(self, kit: Any) -> None:
        self.fake = kit.FakeEvaluate()
        self.settings: list[HarnessSettings] = []

    def __call__(self, task, candidate, repo_root, settings, store) -> Evaluation:  # type: ignore[no-untyped-def]
        self.settings.append(settings)
        return self.fake(task, candidate, repo_root, settings, store)


def test_a_check_spends_no_iteration_runs_untimed_without_hidden_cases_and_is_its_own_job(
    repo: Path, make_runner, kit
) -> None:
    evaluate = Recording(kit)
    runner = make_runner(repo, evaluate, settings=HarnessSettings(hidden_seeds=2))
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    checked = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"), check=True))
    assert evaluate.settings[-1].check_only and evaluate.settings[-1].hidden_seeds == 0
    after = runner.get_attempt(ALICE, attempt.id)
    assert after.iterations_left == 3 and after.checks_used == 1
    assert attempt.checks_left == MAX_CHECKS and after.checks_left == MAX_CHECKS - 1
    final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"), check=True))  # the same job again
    assert runner.get_attempt(ALICE, attempt.id).checks_used == 1 and len(evaluate.settings) == 1
    scored = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert scored.id != checked.id and not evaluate.settings[-1].check_only
    assert evaluate.settings[-1].hidden_seeds == 2
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2
    assert checked.id == job_id(
        "alice", attempt.id, kit.candidate("speedup=2"), runner.get_task(ALICE, SOFTMAX).digest, check=True
    )


def test_a_check_cannot_be_submitted(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate(), settings=HarnessSettings())
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    checked = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=9"), check=True))
    with pytest.raises(InvalidRequest, match="free check"):
        runner.submit(ALICE, attempt.id, checked.id)
    assert not runner.get_attempt(ALICE, attempt.id).submitted


def test_checks_have_a_limit_of_their_own(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate(), settings=HarnessSettings(), max_checks=2)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    for speedup in ("1.1", "1.2"):
        final(runner.evaluate(ALICE, attempt.id, kit.candidate(f"speedup={speedup}"), check=True))
    with pytest.raises(BudgetExhausted, match="2 free checks"):
        runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.3"), check=True)
    final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.3")))  # scored evaluations still work
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2


def test_a_failed_check_refunds_nothing_because_it_spent_nothing(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate(fail_with=ValueError("lane on fire"))
    runner = make_runner(repo, fake, settings=HarnessSettings(), max_tries=1)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(Exception):
        final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"), check=True))
    after = runner.get_attempt(ALICE, attempt.id)
    assert after.iterations_left == 3 and after.checks_used == 1


def _unchecked(kit: Any):  # type: ignore[no-untyped-def]
    """A lane that compiles but cannot check (a HIP task on a CPU lane): every answer NEEDS_DEVICE."""
    from dataclasses import replace

    from arena.evaluation.evaluation import Status
    from arena.scoring.records import Score

    fake = kit.FakeEvaluate()

    def evaluate(task, candidate, repo_root, settings, store) -> Evaluation:  # type: ignore[no-untyped-def]
        done = fake(task, candidate, repo_root, settings, store)
        return replace(done, status=Status.NEEDS_DEVICE, correct=False, score=Score(points=20.0))

    return evaluate


def test_an_unchecked_scored_evaluation_costs_a_check_not_an_iteration(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, _unchecked(kit), settings=HarnessSettings(), max_checks=1)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    first = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert first.status.value == "NEEDS_DEVICE"
    after = runner.get_attempt(ALICE, attempt.id)
    assert (after.iterations_left, after.checks_used) == (3, 1)
    # Checks used up: the next unchecked answer stays an iteration, so compiles are never unbounded.
    final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=3")))
    after = runner.get_attempt(ALICE, attempt.id)
    assert (after.iterations_left, after.checks_used) == (2, 1)


def test_a_cpu_lane_checks_the_untimed_cases_only_as_the_command_line_does(repo: Path, make_runner, kit) -> None:
    """Through the service, a CPU lane once sent the timed, GPU-sized cases to the interpreter: a
    Triton evaluation took over ten minutes. The runner applies the CLI's per-machine settings."""
    evaluate = Recording(kit)
    runner = make_runner(repo, evaluate, settings=HarnessSettings(), lanes=("cpu",))
    final(runner.evaluate(Identity("op", operator=True), "", kit.candidate("speedup=2")))
    (settings,) = evaluate.settings
    assert settings.backend == "cpu" and settings.cases == ("small",)  # "big" is timed: left for a GPU
