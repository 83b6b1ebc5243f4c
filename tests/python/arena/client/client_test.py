from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from arena.api.server import create_server
from arena.candidate.candidate import Candidate
from arena.client import client as client_module
from arena.client.client import Client
from arena.errors import NotFound, NotReady, PermissionDenied, Unauthenticated, UnknownTask
from arena.runner.auth import Tokens, parse_tokens

SOFTMAX = "tasks/triton2triton/softmax:softmax"


def candidate(speedup: str) -> Candidate:
    return Candidate(SOFTMAX, {"kernel.py": speedup.encode()})


def test_an_embedded_runner_when_no_address_is_configured(
    repo: Path, fake_runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    with Client(repo_root=repo, runner=fake_runner()) as client:
        assert client.address.startswith("127.0.0.1:")
        assert [task.address for task in client.list_tasks()] == [SOFTMAX]
        # The embedded identity is an operator: it may evaluate outside an attempt.
        assert client.evaluate(candidate("1.5")).score.speedup == 1.5
        attempt = client.open_attempt(SOFTMAX)
        evaluation = client.evaluate(candidate("3"), attempt.id)
        assert client.submit(attempt.id, evaluation.id).submitted
        assert [row.agent for row in client.leaderboard()] == ["local"]
    # Closing the client stopped its runner.
    with Client(client.address, "any", timeout_s=2) as late, pytest.raises(NotReady, match="cannot reach"):
        late.list_tasks()


def test_the_real_embedded_runner_shares_its_state_folder_safely(
    repo: Path, private_xdg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    monkeypatch.delenv("ARENA_CACHE_DIR", raising=False)
    monkeypatch.setenv("ARENA_DEVICES", "cpu")
    state = private_xdg / "state" / "arena"  # $XDG_STATE_HOME/arena, outside the repository
    with Client(repo_root=repo) as first, Client(repo_root=repo) as second:
        assert first.address != second.address
        assert [task.name for task in second.list_tasks()] == ["softmax"]
        private = [p for p in state.iterdir() if p.name.startswith("runner-")]
        assert len(private) == 1
    assert not [p for p in state.iterdir() if p.name.startswith("runner-")]
    assert (state / "runner" / "runner.sqlite").is_file()
    assert (private_xdg / "cache" / "arena" / "scores.sqlite").is_file() and not (repo / ".arena").exists()


def test_address_and_token_from_the_environment_and_errors_as_arena_exceptions(
    repo: Path, fake_runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = fake_runner()
    server, port = create_server("127.0.0.1:0", runner, Tokens(parse_tokens("alice:a1,bob:b1")))
    server.start()
    try:
        monkeypatch.setenv("ARENA_RUNNER", f"127.0.0.1:{port}")
        monkeypatch.setenv("ARENA_TOKEN", "a1")
        with Client() as alice, Client(token="b1") as bob, Client(token="nope") as stranger:
            attempt = alice.open_attempt("tasks/triton2triton/softmax")
            evaluation = alice.evaluate(candidate("2"), attempt.id)
            with pytest.raises(UnknownTask):
                alice.get_task("tasks/triton2triton/other")
            with pytest.raises(NotFound):
                alice.get_evaluation("missing")
            with pytest.raises(PermissionDenied):
                bob.get_evaluation(evaluation.id)
            with pytest.raises(PermissionDenied):
                bob.evaluate(candidate("2"))
            with pytest.raises(Unauthenticated):
                stranger.list_tasks()
    finally:
        server.stop(0).wait(5)
        runner.stop()


def test_evaluate_retries_an_unreachable_runner_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", sleeps.append)
    client = Client("127.0.0.1:1", "t", timeout_s=2, evaluate_timeout_s=2)
    with client, pytest.raises(NotReady, match="cannot reach"):
        client.evaluate(candidate("1"))
    assert sleeps == [1.0, 2.0, 4.0]


def test_a_throttled_call_is_sent_again_after_growing_pauses_and_a_spent_budget_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A limit's refusal passes (errors.Throttled): the client waits and tries again, within
    THROTTLED_WAIT_S; a spent budget (BudgetExhausted) reaches the caller at once."""
    from arena import errors

    pauses: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", pauses.append)
    answers: Iterator[Exception | str] = iter(
        [errors.Throttled("over its rate"), errors.Throttled("over its rate"), "done"]
    )

    def call() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert client_module.Client._throttled(call) == "done"
    assert len(pauses) == 2 and pauses[1] > pauses[0] * 0.5 and all(p > 0 for p in pauses)

    def always() -> str:
        raise errors.Throttled("too many streams")

    pauses.clear()
    with pytest.raises(errors.Throttled):
        client_module.Client._throttled(always)
    assert client_module.THROTTLED_WAIT_S <= sum(pauses) < client_module.THROTTLED_WAIT_S + 10

    def spent() -> str:
        raise errors.BudgetExhausted("no iterations left")

    pauses.clear()
    with pytest.raises(errors.BudgetExhausted):
        client_module.Client._throttled(spent)
    assert pauses == []
