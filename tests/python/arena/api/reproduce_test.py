"""Reproduce over real gRPC on 127.0.0.1, through the client SDK: operators only."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.client.client import Client
from arena.errors import InvalidRequest, PermissionDenied
from arena.task.digest import task_digest

SOFTMAX = "tasks/triton2triton/softmax:softmax"


@pytest.fixture
def address(repo: Path, make_runner, serve_runner, kit: Any) -> str:
    fake = kit.FakeEvaluate()

    def evaluate(task: Any, candidate: Any, repo_root: Path, settings: Any, store: Any) -> Any:
        return replace(fake(task, candidate, repo_root, settings, store), task_digest=task_digest(task, repo_root))

    return serve_runner(make_runner(repo, evaluate)).address


def test_an_operator_has_an_evaluation_run_again_and_an_agent_may_not(address: str, kit: Any) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        stored = alice.evaluate(kit.candidate("speedup=2"), attempt.id)
        with pytest.raises(PermissionDenied, match="operators"):
            alice.reproduce(stored.id)
        again = ops.reproduce(stored.id)
        assert again.id != stored.id and again.score.speedup == stored.score.speedup == 2.0
        assert ops.get_evaluation(stored.id) == stored and ops.get_evaluation(again.id) == again
        check = alice.evaluate(kit.candidate("speedup=3"), attempt.id, check_only=True)
        with pytest.raises(InvalidRequest, match="free check"):
            ops.reproduce(check.id)
