"""The runner over real gRPC on 127.0.0.1: every method, every status code, concurrency, restarts.

Requests are built by hand (protobuf wire format) where a test needs a malformed or raw one,
so tests import no generated module.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import cast

import grpc
import pytest

from arena.client.client import Client
from arena.errors import BudgetExhausted
from arena.evaluation.evaluation import Evaluation
from arena.runner.auth import Tokens, parse_tokens
from arena.runner.runner import MAX_CHECKS, Runner
from arena.task.load import load_tasks
from arena_testing.raw_protobuf import field
from arena_testing.waiting import WAIT_S, wait_until

SOFTMAX = "tasks/triton2triton/softmax:softmax"
SERVICE = "/arena.v1.Runner/"
TIMEOUT_S = 10


def evaluate_request(attempt: str, files: dict[str, bytes], task: str = SOFTMAX) -> bytes:
    files_bytes = b"".join(field(2, field(1, path) + field(2, content)) for path, content in files.items())
    return field(1, attempt) + field(2, field(1, task) + files_bytes)


def call(address: str, method: str, request: bytes, token: str | None = "alice-token") -> bytes:
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(address) as channel:
        if method == "Evaluate":
            stream = channel.unary_stream(SERVICE + method)(request, metadata=metadata, timeout=TIMEOUT_S)
            return b"".join(stream)
        return channel.unary_unary(SERVICE + method)(request, metadata=metadata, timeout=TIMEOUT_S)


def code_of(address: str, method: str, request: bytes, token: str | None = "alice-token") -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as caught:
        call(address, method, request, token)
    return cast(grpc.RpcError, caught.value).code()


def assert_serving(address: str) -> None:
    assert SOFTMAX.encode() in call(address, "ListTasks", b"")


def test_every_method_over_grpc(repo: Path, make_runner, serve_runner, kit) -> None:
    served = serve_runner(make_runner(repo, kit.FakeEvaluate()))
    with Client(served.address, "alice-token") as client:
        assert [task.address for task in client.list_tasks("triton2triton")] == [SOFTMAX]
        view = client.get_task("tasks/triton2triton/softmax")
        assert view.baseline_files["kernel.py"].startswith(b"def softmax")
        assert [case.name for case in view.cases] == ["small", "big"] and view.cases[1].timed
        attempt = client.open_attempt(SOFTMAX)
        steps: list[str] = []
        evaluation = client.evaluate(
            kit.candidate("speedup=2.5"), attempt.id, on_progress=lambda p: steps.append(p.stage)
        )
        assert steps[-1] == "done" and evaluation.score.speedup == 2.5 and evaluation.correct
        assert client.get_attempt(attempt.id).iterations_left == 2
        checked = client.evaluate(kit.candidate("speedup=2.5"), attempt.id, check_only=True)  # a job apart, free
        assert checked.id != evaluation.id
        seen = client.get_attempt(attempt.id)
        assert (seen.iterations_left, seen.checks_used, seen.checks_left) == (2, 1, MAX_CHECKS - 1)  # over the wire
        assert client.get_evaluation(evaluation.id) == evaluation
        submitted = client.submit(attempt.id, evaluation.id)
        assert submitted.submitted and submitted.final_evaluation == evaluation.id
        (row,) = client.leaderboard()
        assert (row.agent, row.tasks, row.mean_speedup, row.correct_rate) == ("alice", 1, 2.5, 1.0)


def test_status_codes_and_the_server_keeps_serving(repo: Path, make_runner, serve_runner, kit) -> None:
    fake = kit.FakeEvaluate()
    address = serve_runner(make_runner(repo, fake)).address
    codes = grpc.StatusCode
    assert code_of(address, "ListTasks", b"", token=None) == codes.UNAUTHENTICATED
    assert code_of(address, "ListTasks", b"", token="bob-token-wrong") == codes.UNAUTHENTICATED
    assert code_of(address, "GetTask", field(1, "tasks/triton2triton/nope")) == codes.NOT_FOUND
    assert code_of(address, "GetTask", field(1, "")) == codes.NOT_FOUND
    assert code_of(address, "OpenAttempt", field(1, "tasks/x/y")) == codes.NOT_FOUND
    assert code_of(address, "GetAttempt", field(1, "nope")) == codes.NOT_FOUND
    assert code_of(address, "GetEvaluation", field(1, "nope")) == codes.NOT_FOUND
    # Garbage that is no protobuf message: gRPC itself answers, the server lives on.
    assert code_of(address, "GetTask", b"\xff\xff\xff\xff") in (codes.INTERNAL, codes.INVALID_ARGUMENT)
    assert code_of(address, "Evaluate", b"\x12\xff\x01") in (codes.INTERNAL, codes.INVALID_ARGUMENT)
    # Over the 8 MiB receive limit.
    huge = evaluate_request("", {"kernel.py": b"x" * (9 << 20)})
    assert code_of(address, "Evaluate", huge, token="ops-token") == codes.RESOURCE_EXHAUSTED
    # Over the candidate limits but under the message limit.
    too_big = evaluate_request("", {"kernel.py": b"x" * ((1 << 20) + 1)})
    assert code_of(address, "Evaluate", too_big, token="ops-token") == codes.INVALID_ARGUMENT
    outside = evaluate_request("", {"../../pants.toml": b"x"})
    assert code_of(address, "Evaluate", outside, token="ops-token") == codes.INVALID_ARGUMENT
    twice = field(1, "") + field(2, field(1, SOFTMAX) + field(2, field(1, "kernel.py")) * 2)
    assert code_of(address, "Evaluate", twice, token="ops-token") == codes.INVALID_ARGUMENT
    assert code_of(address, "Evaluate", evaluate_request("", {"kernel.py": b"x"})) == codes.PERMISSION_DENIED
    assert fake.calls == []
    assert_serving(address)

    with Client(address, "alice-token") as alice, Client(address, "bob-token") as bob:
        attempt = alice.open_attempt(SOFTMAX)
        evaluations = [alice.evaluate(kit.candidate(f"speedup={i}"), attempt.id) for i in (1, 2, 3)]
        request = evaluate_request(attempt.id, {"kernel.py": b"speedup=4"})
        assert code_of(address, "Evaluate", request) == codes.RESOURCE_EXHAUSTED
        assert code_of(address, "GetEvaluation", field(1, evaluations[0].id), "bob-token") == codes.PERMISSION_DENIED
        assert code_of(address, "GetAttempt", field(1, attempt.id), "bob-token") == codes.PERMISSION_DENIED
        with pytest.raises(BudgetExhausted):
            alice.evaluate(kit.candidate("speedup=4"), attempt.id)
        assert bob.leaderboard() == ()
    fake.fail_with = RuntimeError("secret detail of a runner bug")
    with pytest.raises(grpc.RpcError) as caught:
        call(address, "Evaluate", evaluate_request("", {"kernel.py": b"speedup=7"}), "ops-token")
    error = cast(grpc.RpcError, caught.value)
    assert error.code() == codes.INTERNAL and "secret detail" not in (error.details() or "")
    assert_serving(address)


def test_a_full_queue_refuses_with_resource_exhausted(repo: Path, make_runner, serve_runner, kit) -> None:
    gate = threading.Semaphore(0)  # jobs are held until the test lets them go
    address = serve_runner(make_runner(repo, kit.FakeEvaluate(gate=gate), max_pending=1)).address
    with grpc.insecure_channel(address) as channel:
        evaluate = channel.unary_stream(SERVICE + "Evaluate")
        metadata = (("authorization", "Bearer ops-token"),)
        running = evaluate(evaluate_request("", {"kernel.py": b"speedup=0"}), metadata=metadata)
        while b"running" not in next(running):  # out of the queue, held by its lane
            pass
        pending = evaluate(evaluate_request("", {"kernel.py": b"speedup=1"}), metadata=metadata)
        next(pending)  # the one place in the queue
        refused = evaluate(evaluate_request("", {"kernel.py": b"speedup=9"}), metadata=metadata, timeout=TIMEOUT_S)
        with pytest.raises(grpc.RpcError) as caught:
            list(refused)
        error = cast(grpc.RpcError, caught.value)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "pending" in (error.details() or "")
        running.cancel()
        pending.cancel()
    gate.release(2)


def test_cancelled_streams_give_their_threads_back(repo: Path, make_runner, kit, tokens) -> None:
    from arena.api.server import create_server

    gate = threading.Semaphore(0)
    runner = make_runner(repo, kit.FakeEvaluate(gate=gate))  # its jobs do not change until released
    server, port = create_server("127.0.0.1:0", runner, tokens, max_workers=2)
    server.start()
    address = f"127.0.0.1:{port}"
    try:
        with grpc.insecure_channel(address) as channel:
            evaluate = channel.unary_stream(SERVICE + "Evaluate")
            metadata = (("authorization", "Bearer ops-token"),)
            # Both threads of the server follow a job that will not change while the test holds
            # it: the first one running, the second one first in line behind it.
            running = evaluate(evaluate_request("", {"kernel.py": b"speedup=1"}), metadata=metadata)
            while b"running" not in next(running):
                pass
            waiting = evaluate(evaluate_request("", {"kernel.py": b"speedup=2"}), metadata=metadata)
            next(waiting)
            running.cancel()
            waiting.cancel()
        # Served again while both jobs are still held: the cancelled streams gave their threads back.
        wait_until(
            lambda: SOFTMAX.encode() in call(address, "ListTasks", b""), "a free thread", ignoring=(grpc.RpcError,)
        )
    finally:
        server.stop(0).wait(5)
        gate.release(2)


def test_twenty_four_agents_at_once(repo: Path, make_runner, serve_runner, kit) -> None:
    """Each agent sends 5 different candidates at once on a 3-iteration attempt, plus a repeat."""
    agents = [f"agent{i:02d}" for i in range(24)]
    tokens = Tokens(parse_tokens(",".join(f"{agent}:{agent}-token" for agent in agents)))
    fake = kit.FakeEvaluate(delay_s=0.002)
    address = serve_runner(make_runner(repo, fake, lanes=("0", "1")), tokens).address
    results: dict[str, list[Evaluation | None]] = {agent: [] for agent in agents}
    lock = threading.Lock()

    def send(client: Client, agent: str, attempt: str, text: str) -> None:
        try:
            outcome: Evaluation | None = client.evaluate(kit.candidate(text), attempt)
        except BudgetExhausted:
            outcome = None  # refused
        with lock:
            results[agent].append(outcome)

    clients = {agent: Client(address, f"{agent}-token") for agent in agents}
    try:
        attempts = {agent: clients[agent].open_attempt(SOFTMAX).id for agent in agents}
        threads = [
            threading.Thread(target=send, args=(clients[agent], agent, attempts[agent], f"{agent} speedup={k + 1}"))
            for agent in agents
            for k in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads)
        for agent in agents:
            done = [r for r in results[agent] if r is not None]
            assert len(done) == 3 and results[agent].count(None) == 2
            assert clients[agent].get_attempt(attempts[agent]).iterations_left == 0
            # Sending an accepted candidate again is the same evaluation, even with no iterations left.
            repeat_text = f"{agent} speedup={int(done[0].score.speedup)}"
            assert clients[agent].evaluate(kit.candidate(repeat_text), attempts[agent]).id == done[0].id
            best = max(done, key=lambda e: e.score.speedup)
            assert clients[agent].get_evaluation(best.id) == best
            clients[agent].submit(attempts[agent], best.id)
        assert len(fake.calls) == 24 * 3 == len(set(fake.calls))
        rows = clients[agents[0]].leaderboard("triton2triton")
        assert sorted(row.agent for row in rows) == agents and all(row.tasks == 1 for row in rows)
    finally:
        for client in clients.values():
            client.close()


def test_a_server_restarted_on_its_state_finishes_every_accepted_job(tmp_path: Path, kit, tokens) -> None:
    from arena.api.server import create_server

    repo = kit.write_repo(tmp_path / "repo")
    state = tmp_path / "state"
    gate = threading.Semaphore(0)
    slow = kit.FakeEvaluate(gate=gate)  # a job it started is held mid-run until the test lets it go
    runner = Runner(repo, state, slow, tasks=load_tasks(repo)).start()
    first_lanes = list(runner._queue._workers)
    server, port = create_server("127.0.0.1:0", runner, tokens)
    server.start()
    ids: list[str] = []

    class Accepted(Exception):
        pass

    def note_id(progress: object) -> None:
        ids.append(progress.evaluation_id)  # type: ignore[attr-defined]
        raise Accepted

    with Client(f"127.0.0.1:{port}", "ops-token") as client:
        for i in range(4):
            with pytest.raises(Accepted):
                client.evaluate(kit.candidate(f"speedup={i + 1}"), on_progress=note_id)
    server.stop(0).wait(5)
    runner.stop(timeout_s=0.05)

    fast = kit.FakeEvaluate()
    runner = Runner(repo, state, fast, tasks=load_tasks(repo)).start()
    server, port = create_server("127.0.0.1:0", runner, tokens)
    server.start()
    try:
        with Client(f"127.0.0.1:{port}", "ops-token") as client:
            # The same request re-attaches to the same job; nothing is evaluated twice.
            again = [client.evaluate(kit.candidate(f"speedup={i + 1}")) for i in range(4)]
            assert [e.id for e in again] == ids
            assert [client.get_evaluation(i).score.speedup for i in ids] == [1, 2, 3, 4]
        assert len(slow.calls) + len(fast.calls) <= 5 and set(fast.calls) | set(slow.calls) == set(
            fast.calls + slow.calls
        )
        assert len(set(fast.calls) | set(slow.calls)) == 4
    finally:
        server.stop(0).wait(5)
        runner.stop(timeout_s=2)
        gate.release()  # the first runner's interrupted job ends now, quietly, against its closed state
        for lane in first_lanes:
            lane.join(WAIT_S)
    assert not any(lane.is_alive() for lane in first_lanes)
