"""Per-identity limits: one agent holding many Evaluate streams, or calling too fast, is refused
RESOURCE_EXHAUSTED naming the limit, and every other agent's calls keep working."""

from __future__ import annotations

import threading
from concurrent import futures
from pathlib import Path
from typing import Any, Callable, cast

import grpc
import pytest

from arena.api.limits import CallGate, CallLimits
from arena.api.server import MAX_WORKERS
from arena.api.service import Gatekeeper, add_runner_service
from arena.errors import BudgetExhausted
from arena.runner.auth import Tokens, parse_tokens
from arena_testing.runner_kit import fake_evaluation
from arena_testing.waiting import WAIT_S, wait_until

SOFTMAX = "tasks/triton2triton/softmax:softmax"
SERVICE = "/arena.v1.Runner/"
TIMEOUT_S = WAIT_S  # every call's deadline: it bounds a hang, and outlasts the slowest machine's setup
HOLD_S = 5 * WAIT_S  # the most a held job waits for its release: longer than any call's deadline


def field(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    assert len(data) < 128
    return bytes([number << 3 | 2, len(data)]) + data


def evaluate_request(attempt: str, text: str) -> bytes:
    return field(1, attempt) + field(2, field(1, SOFTMAX) + field(2, field(1, "kernel.py") + field(2, text)))


def metadata(agent: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {agent}-token"),)


class HeldEvaluate:
    """A fake evaluate whose jobs wait until `release` is set: their streams stay open (a call
    that waited for a held stream to end would meet its own deadline first)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, task, candidate, repo_root, settings, store):  # type: ignore[no-untyped-def]
        self.release.wait(HOLD_S)
        return fake_evaluation(task, candidate)


def open_streams(channel: grpc.Channel, agent: str, attempt: str, count: int) -> tuple[list[Any], list[str]]:
    """`count` Evaluate streams of the same candidate (the same job: repeats are free); the open
    ones, and the details of the refused ones."""
    evaluate = channel.unary_stream(SERVICE + "Evaluate")
    held, refused = [], []
    for _ in range(count):
        stream = evaluate(evaluate_request(attempt, "speedup=2"), metadata=metadata(agent), timeout=TIMEOUT_S)
        try:
            next(stream)
            held.append(stream)
        except grpc.RpcError as error:
            assert cast(grpc.RpcError, error).code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            refused.append(cast(grpc.RpcError, error).details() or "")
    return held, refused


def open_attempt(channel: grpc.Channel, agent: str) -> str:
    reply = channel.unary_unary(SERVICE + "OpenAttempt")(field(1, SOFTMAX), metadata=metadata(agent), timeout=TIMEOUT_S)
    return reply[2 : 2 + reply[1]].decode()  # field 1 of arena.v1.Attempt: the id


def unary_calls_work(channel: grpc.Channel, agent: str) -> None:
    """Calls another agent makes while the streams are held, each answered while they still are."""
    for method, request in (("ListTasks", b""), ("GetTask", field(1, SOFTMAX)), ("Leaderboard", b"")):
        channel.unary_unary(SERVICE + method)(request, metadata=metadata(agent), timeout=TIMEOUT_S)
    open_attempt(channel, agent)


def test_the_stream_cap_leaves_threads_for_unary_calls() -> None:
    limits = CallLimits()
    assert limits.streams_per_identity < limits.total_streams < MAX_WORKERS


def test_one_identity_holding_many_streams_does_not_block_anothers_calls(repo: Path, make_runner, serve_runner) -> None:
    held_evaluate = HeldEvaluate()
    address = serve_runner(make_runner(repo, held_evaluate)).address  # server.py's own pool and limits
    with grpc.insecure_channel(address) as alice, grpc.insecure_channel(address) as bob:
        try:
            held, refused = open_streams(alice, "alice", open_attempt(alice, "alice"), 140)
            assert len(held) == CallLimits().streams_per_identity
            assert len(refused) == 140 - len(held)
            assert all("streams_per_identity" in d or "request rate" in d for d in refused)
            assert any("streams_per_identity=16" in d for d in refused)
            unary_calls_work(bob, "bob")
            (bobs_stream,), _ = open_streams(bob, "bob", open_attempt(bob, "bob"), 1)  # bob's own Evaluate
        finally:
            held_evaluate.release.set()
    # Once alice's streams end, their places come back. Her 141 calls spent her rate's burst, and
    # her streams end as their jobs do: asked until a stream is let in, a refusal each time being
    # the rate (refilled at 50 calls/s) or streams not yet ended.
    with grpc.insecure_channel(address) as alice:
        attempt = wait_until(lambda: open_attempt(alice, "alice"), "alice's rate to refill", ignoring=(grpc.RpcError,))
        refusals: list[str] = []

        def stream_let_in() -> bool:
            again, refused = open_streams(alice, "alice", attempt, 1)
            refusals.extend(refused)
            return len(again) == 1

        wait_until(stream_let_in, "alice's places to come back")
        assert all("request rate" in d or "streams_per_identity" in d for d in refusals)


def test_streams_of_many_identities_cannot_take_every_thread(repo: Path, make_runner) -> None:
    """A pool of 6 threads and at most 4 streams in all: 3 agents asking for 2 streams each leave
    2 threads, and another agent's unary calls are served."""
    agents = ("a1", "a2", "a3", "bob")
    tokens = Tokens(parse_tokens(",".join(f"{agent}:{agent}-token" for agent in agents)))
    held_evaluate = HeldEvaluate()
    runner = make_runner(repo, held_evaluate)
    gate = CallGate(CallLimits(streams_per_identity=2, total_streams=4))
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=6), interceptors=(Gatekeeper(tokens, gate),), maximum_concurrent_rpcs=6
    )
    add_runner_service(server, runner, tokens, gate)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    address = f"127.0.0.1:{port}"
    try:
        with grpc.insecure_channel(address) as channel:
            outcomes = [open_streams(channel, agent, open_attempt(channel, agent), 2) for agent in agents[:3]]
            assert sum(len(held) for held, _ in outcomes) == 4
            refused = [detail for _, details in outcomes for detail in details]
            assert len(refused) == 2 and all("total_streams" in detail for detail in refused)
            unary_calls_work(channel, "bob")
    finally:
        held_evaluate.release.set()
        server.stop(0).wait(5)


def test_the_request_rate_is_per_identity() -> None:
    now = [0.0]
    gate = CallGate(CallLimits(calls_per_second=10, burst=3), clock=lambda: now[0])
    for _ in range(3):
        gate.admit("alice")
    with pytest.raises(BudgetExhausted, match=r"agent 'alice' is over its request rate \(10 calls/s, bursts of 3\)"):
        gate.admit("alice")
    gate.admit("bob")  # another identity's bucket is its own
    now[0] += 0.1  # one call's worth of time
    gate.admit("alice")
    with pytest.raises(BudgetExhausted):
        gate.admit("alice")


def test_a_released_stream_gives_its_place_back_once() -> None:
    gate = CallGate(CallLimits(streams_per_identity=1, total_streams=2))
    release = gate.open_stream("alice")
    with pytest.raises(BudgetExhausted, match="streams_per_identity=1"):
        gate.open_stream("alice")
    release()
    release()  # a second release (the call's callback and the stream's end) changes nothing
    assert gate.open_streams("alice") == 0
    gate.open_stream("alice")
    gate.open_stream("bob")
    with pytest.raises(BudgetExhausted, match="total_streams"):
        gate.open_stream("carol")


def test_a_call_is_refused_by_its_token_and_rate_before_its_request_is_parsed(
    repo: Path, make_runner, serve_runner
) -> None:
    """Bytes that are no request at all: a call without a known token, or over its rate, is refused
    as such (UNAUTHENTICATED, RESOURCE_EXHAUSTED), not answered for its malformed request. Before
    the Gatekeeper the runner parsed every request first: the unauthenticated call's answer was
    the parsing's failure, and a stream of large ones cost every caller that parsing."""
    address = serve_runner(make_runner(repo, fake_evaluation)).address
    garbage = b"\xff" * 4096

    def code_of(call: Callable[[], object]) -> grpc.StatusCode | None:
        try:
            call()
        except grpc.RpcError as error:
            return cast(grpc.Call, error).code()
        return None

    with grpc.insecure_channel(address) as channel:
        list_tasks = channel.unary_unary(SERVICE + "ListTasks")
        evaluate = channel.unary_stream(SERVICE + "Evaluate")
        assert code_of(lambda: list_tasks(garbage, timeout=TIMEOUT_S)) == grpc.StatusCode.UNAUTHENTICATED
        assert code_of(lambda: list(evaluate(garbage, timeout=TIMEOUT_S))) == grpc.StatusCode.UNAUTHENTICATED
        # With alice's token the same bytes are parsed, and fail as a request; once her rate is
        # spent, they are refused before that.
        codes = [code_of(lambda: list_tasks(garbage, metadata=metadata("alice"), timeout=TIMEOUT_S))]
        while codes[-1] != grpc.StatusCode.RESOURCE_EXHAUSTED and len(codes) < 20 * CallLimits().burst:
            codes.append(code_of(lambda: list_tasks(garbage, metadata=metadata("alice"), timeout=TIMEOUT_S)))
        assert codes[0] != grpc.StatusCode.RESOURCE_EXHAUSTED and codes[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED
