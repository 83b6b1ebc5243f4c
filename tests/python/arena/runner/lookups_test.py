"""Looking a job up for its owner and state never decodes its candidate's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.candidate.candidate import Candidate
from arena.runner import queue
from arena.runner.auth import Identity

ALICE = Identity("alice")
SOFTMAX = "tasks/triton2triton/softmax:softmax"


def test_get_evaluation_submit_and_a_repeat_leave_the_files_undecoded(
    repo: Path, make_runner, kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: each call decoded the stored files under the state's lock (25 ms for 4 MiB): one
    agent calling GetEvaluation at its allowed rate made another's GetAttempt take 220 ms, not 0.6."""
    runner = make_runner(repo, kit.FakeEvaluate())
    attempt = runner.open_attempt(ALICE, SOFTMAX).id
    candidate = kit.candidate("speedup=2 " + "#" * 1000)
    (*_, done) = runner.evaluate(ALICE, attempt, candidate)
    decoded: list[str] = []
    decode = queue.candidate_from_json

    def counting(text: str) -> Candidate:
        decoded.append(text)
        return decode(text)

    monkeypatch.setattr(queue, "candidate_from_json", counting)
    assert runner.get_evaluation(ALICE, done.evaluation_id).score.speedup == 2
    assert [step.stage for step in runner.evaluate(ALICE, attempt, candidate)] == ["done"]  # a repeat
    assert runner.submit(ALICE, attempt, done.evaluation_id).submitted
    assert decoded == []
