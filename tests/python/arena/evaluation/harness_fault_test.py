"""evaluate() stores and returns only what the harness produced: a result the parent made because
no signed result came back raises HarnessFault and leaves the score cache untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import baseline_candidate
from arena.evaluation.evaluate import HarnessFault, evaluate, harness_fault
from arena.harness.job import failure
from arena.harness.result import HarnessResult, StageLog
from arena.harness.settings import HarnessSettings
from arena.task.load import load_tasks

UNSIGNED = (
    "the child was killed by SIGKILL without a result",
    "the child exited with code 0 without a result",
    "the child exited with code -9 without a result",
    "the child ended without a result",
)


@pytest.mark.parametrize("message", UNSIGNED)
def test_the_parents_no_result_failures_are_faults(message: str) -> None:
    assert harness_fault(failure("RUNTIME_ERROR", message, "--- stderr ---\nlog", fault=True)) == message


@pytest.mark.parametrize(
    "result",
    [
        HarnessResult("RUNTIME_ERROR", True, False, errors=("first call: the candidate's worker killed by SIGKILL",)),
        HarnessResult(
            "RUNTIME_ERROR", False, False, errors=("compile: the child was killed by SIGKILL without a result",)
        ),
        HarnessResult(
            "RUNTIME_ERROR",
            False,
            False,
            stages=(StageLog("compile", False, 1.0),),
            errors=("the child ended without a result",),
        ),
        # The same words without the parent's mark: a message is no proof of who made a result.
        failure("RUNTIME_ERROR", "the child ended without a result"),
        failure("TIMEOUT", "no result within 5 s; the process group was killed"),
        failure("CHEAT_DETECTED", "result channel tampered with: bad signature"),
        HarnessResult("PASSED", True, True),
    ],
)
def test_results_the_harness_produced_are_verdicts(result: HarnessResult) -> None:
    assert harness_fault(result) == ""


def test_a_fault_is_raised_and_never_stored(add_repo: Path, tmp_path: Path) -> None:
    repo = add_repo
    (task,) = load_tasks(repo)
    store = SqliteStore(tmp_path / "scores.sqlite")
    candidate = baseline_candidate(task, repo)
    settings = HarnessSettings(backend="cpu")
    killed = failure("RUNTIME_ERROR", "the child was killed by SIGKILL without a result", fault=True)
    with pytest.raises(HarnessFault, match="SIGKILL"):
        evaluate(task, candidate, repo, settings, store, runner=lambda *_: killed)
    passed = evaluate(task, candidate, repo, settings, store, runner=lambda *_: HarnessResult("PASSED", True, True))
    assert passed.correct and not passed.cached  # the fault left nothing to answer from
