"""Finalize, RecordUsage and GetTrajectory over real gRPC on 127.0.0.1, through the client SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import grpc
import pytest

from arena.client.client import Client
from arena.errors import AttemptOpen, InvalidCandidate, InvalidRequest, NotFound, PermissionDenied
from arena.runner.records import Usage
from arena_testing.raw_protobuf import field

SOFTMAX = "tasks/triton2triton/softmax:softmax"
USAGE = Usage(input_tokens=5000, output_tokens=800, cached_tokens=4000, cost_usd=0.25, turns=9, tool_calls=14,
              wall_s=120.5)  # fmt: skip
EVENTS = b"".join(b'{"type": "tool_use", "n": %d}\n' % n for n in range(200))


def code_of(address: str, method: str, request: bytes, token: str) -> grpc.StatusCode:
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as caught:
        call = channel.unary_unary(f"/arena.v1.Runner/{method}")
        call(request, metadata=(("authorization", f"Bearer {token}"),), timeout=10)
    return cast(grpc.RpcError, caught.value).code()


@pytest.fixture
def clock() -> list[float]:
    return [1000.0]


@pytest.fixture
def address(repo: Path, make_runner, serve_runner, kit: Any, clock: list[float]) -> str:
    runner = make_runner(repo, kit.FakeEvaluate(), clock=lambda: clock[0], max_trajectory_bytes=64 << 10)
    return serve_runner(runner).address


def test_finalize_is_for_operators_after_the_deadline_or_the_agents_end(
    address: str, tmp_path: Path, clock: list[float]
) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        request = field(1, attempt.id) + field(2, field(2, field(1, "kernel.py") + field(2, "speedup=2")))
        assert code_of(address, "Finalize", request, "alice-token") == grpc.StatusCode.PERMISSION_DENIED
        assert code_of(address, "Finalize", request, "ops-token") == grpc.StatusCode.FAILED_PRECONDITION
        assert not alice.get_attempt(attempt.id).submitted
        with pytest.raises(PermissionDenied, match="operators"):
            alice.record_usage(attempt.id, USAGE, EVENTS, "events.jsonl")
        clock[0] += 3601  # past the deadline an operator may, with no word about the agent
        assert code_of(address, "Finalize", request, "alice-token") == grpc.StatusCode.PERMISSION_DENIED
        (tmp_path / "candidate").mkdir()
        (tmp_path / "candidate" / "kernel.py").write_text("speedup=2\n")
        finalized = ops.finalize(attempt.id, tmp_path / "candidate", agent_ended=False)
        assert finalized.finalized and alice.get_evaluation(finalized.final_evaluation).score.speedup == 2.0


def test_the_workspace_files_become_the_submission_and_usage_reaches_the_leaderboard(
    address: str, tmp_path: Path, clock: list[float]
) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        workspace = tmp_path / "workspace"
        alice.workspace(SOFTMAX, workspace)
        (workspace / "candidate" / "kernel.py").write_text("speedup=3.5\n")
        (workspace / "candidate" / "__pycache__").mkdir()
        (workspace / "candidate" / "__pycache__" / "kernel.pyc").write_bytes(b"left out")
        with pytest.raises(AttemptOpen, match="deadline"):
            ops.finalize(attempt.id, workspace / "candidate", agent_ended=False)
        finalized = ops.finalize(attempt.id, workspace / "candidate")  # the agent ended: before the deadline
        assert finalized.submitted and finalized.finalized and finalized.iterations_left == 3
        evaluation = alice.get_evaluation(finalized.final_evaluation)  # done: finalize waited for it
        assert evaluation.score.speedup == 3.5
        assert ops.finalize(attempt.id, workspace / "candidate") == finalized  # a second time changes nothing
        ops.record_usage(attempt.id, USAGE, EVENTS, "claude-code.stream.jsonl")
        assert alice.trajectory(attempt.id) == EVENTS and ops.trajectory(attempt.id) == EVENTS
        (row,) = alice.leaderboard()
        assert row.mean_speedup == 3.5 and row.mean_evaluations == 0.0 and row.mean_checks == 0.0
        assert (row.mean_input_tokens, row.mean_output_tokens, row.mean_cached_tokens) == (5000, 800, 4000)
        assert (row.mean_cost_usd, row.mean_turns, row.mean_tool_calls, row.mean_wall_s) == (0.25, 9, 14, 120.5)


def test_another_agent_cannot_read_a_trajectory(address: str) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        ops.record_usage(attempt.id, USAGE, EVENTS, "events.jsonl")
    assert code_of(address, "GetTrajectory", field(1, attempt.id), "bob-token") == grpc.StatusCode.PERMISSION_DENIED
    with Client(address, "bob-token") as bob, pytest.raises(PermissionDenied, match="another agent"):
        bob.trajectory(attempt.id)


def test_a_trajectory_over_the_cap_is_refused_with_a_clear_message(address: str) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        too_long = EVENTS * 400  # about 2 MiB, over this runner's 64 KiB; compressed it is tiny
        with pytest.raises(InvalidRequest, match=r"more than the 65536 bytes \(0.0625 MiB\) the runner keeps"):
            ops.record_usage(attempt.id, USAGE, too_long, "events.jsonl")
        with pytest.raises(InvalidRequest, match=r"more than the 67108864 bytes \(64 MiB\)"):
            ops.record_usage(attempt.id, USAGE, bytes((64 << 20) + 1), "events.jsonl")  # refused before sending
        with pytest.raises(NotFound):
            ops.trajectory(attempt.id)  # neither was kept


def test_finalize_refuses_a_folder_that_is_no_candidate(address: str, tmp_path: Path, clock: list[float]) -> None:
    with Client(address, "alice-token") as alice, Client(address, "ops-token") as ops:
        attempt = alice.open_attempt(SOFTMAX)
        clock[0] += 3601
        with pytest.raises(InvalidCandidate, match="does not exist"):
            ops.finalize(attempt.id, tmp_path / "missing")
        (tmp_path / "candidate").mkdir()
        (tmp_path / "candidate" / "kernel.py").symlink_to(tmp_path / "elsewhere.py")
        with pytest.raises(InvalidCandidate, match="plain file"):
            ops.finalize(attempt.id, tmp_path / "candidate")
        assert not alice.get_attempt(attempt.id).submitted
