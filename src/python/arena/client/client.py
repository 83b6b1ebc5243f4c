"""A small SDK for the runner: what agents, adapters and the CLI call.

`Client(address, token)` talks to a runner at HOST:PORT; with no address (and no ARENA_RUNNER)
it starts an embedded runner in this process on 127.0.0.1. `tls_ca` (or ARENA_TLS_CA) names the
PEM file of the CA the runner's certificate must chain to; without it the client speaks
plaintext, and refuses to beyond loopback unless `insecure_connect` (or ARENA_INSECURE_CONNECT=1).
Errors come back as the arena exceptions the runner raised (the class name travels in trailing
metadata).
"""

from __future__ import annotations

import os
import random
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, NoReturn, TypeVar

import grpc

from arena import errors
from arena.api import convert
from arena.api.transport import channel_credentials, require_safe_connect
from arena.api.wire import ERROR_KIND_KEY, MAX_RECEIVE_BYTES, MAX_SEND_BYTES
from arena.candidate.candidate import Candidate, read_folder
from arena.errors import ArenaError, InvalidRequest, NotReady
from arena.evaluation.evaluation import Evaluation
from arena.runner.accounting import compress_trajectory, inflate_trajectory
from arena.runner.records import Attempt, LeaderboardRow, Progress, TaskView, Usage
from arena.runner.workspace import write_workspace
from arena.v1 import runner_pb2, runner_pb2_grpc

if TYPE_CHECKING:  # server code, loaded only when a runner is embedded
    from arena.api.embedded import EmbeddedRunner
    from arena.runner.runner import Runner

RUNNER_VARIABLE = "ARENA_RUNNER"  # HOST:PORT of a runner
TOKEN_VARIABLE = "ARENA_TOKEN"  # the agent's bearer token for it
TLS_CA_VARIABLE = "ARENA_TLS_CA"  # PEM file of the CA that signed the runner's certificate
INSECURE_CONNECT_VARIABLE = "ARENA_INSECURE_CONNECT"  # "1": plaintext beyond loopback is allowed
UNARY_TIMEOUT_S = 60.0
# An Evaluate stream that breaks (runner restarting) is sent again: the runner recognises the
# same candidate in the same attempt and follows the same job without spending an iteration.
EVALUATE_RETRIES = 3
# A call a limit refused (Throttled: the rate, or too many open streams) is sent again after a
# growing pause, for about this long in all, before the refusal reaches the caller.
THROTTLED_WAIT_S = 60.0
# Status codes whose error class the runner did not name (e.g. a refused connection).
CODE_ERRORS: dict[grpc.StatusCode, type[ArenaError]] = {
    grpc.StatusCode.UNAUTHENTICATED: errors.Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDenied,
    grpc.StatusCode.NOT_FOUND: errors.NotFound,
    grpc.StatusCode.INVALID_ARGUMENT: errors.InvalidRequest,
    grpc.StatusCode.RESOURCE_EXHAUSTED: errors.BudgetExhausted,
    grpc.StatusCode.UNAVAILABLE: errors.NotReady,
}
Reply = TypeVar("Reply")
# A compressed trajectory must fit in one request, with room for the rest of it.
MAX_TRAJECTORY_WIRE_BYTES = MAX_RECEIVE_BYTES - (64 << 10)


class Client:
    def __init__(
        self,
        address: str | None = None,
        token: str | None = None,
        *,
        repo_root: Path | None = None,
        runner: Runner | None = None,
        timeout_s: float = UNARY_TIMEOUT_S,
        evaluate_timeout_s: float | None = None,
        tls_ca: Path | str | None = None,
        insecure_connect: bool | None = None,
    ) -> None:
        """`runner`: the runner to embed when no address is configured (default: the real one).
        `tls_ca`, `insecure_connect`: default ARENA_TLS_CA, ARENA_INSECURE_CONNECT."""
        address = address or os.environ.get(RUNNER_VARIABLE, "")
        self._embedded: EmbeddedRunner | None = None
        if not address:
            # Only now the server side is imported: an SDK that talks to a runner loads none of it.
            from arena.api.embedded import start_embedded_runner
            from arena.task.load import find_repo_root

            self._embedded = start_embedded_runner(repo_root or find_repo_root(), runner)
            address, token = self._embedded.address, self._embedded.token
        token = token or os.environ.get(TOKEN_VARIABLE, "")
        self.address = address
        self._timeout_s = timeout_s
        self._evaluate_timeout_s = evaluate_timeout_s
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        options = [
            ("grpc.max_send_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_receive_message_length", MAX_SEND_BYTES),
        ]
        # The embedded runner serves plaintext on loopback, whatever the environment says.
        ca = None if self._embedded is not None else tls_ca or os.environ.get(TLS_CA_VARIABLE, "")
        if ca:
            self._channel = grpc.secure_channel(address, channel_credentials(Path(ca)), options=options)
        else:
            if insecure_connect is None:
                insecure_connect = os.environ.get(INSECURE_CONNECT_VARIABLE, "") == "1"
            require_safe_connect(address, tls=False, insecure_connect=insecure_connect)
            self._channel = grpc.insecure_channel(address, options=options)
        self._stub = runner_pb2_grpc.RunnerStub(self._channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()
        if self._embedded is not None:
            self._embedded.stop()
            self._embedded = None

    def list_tasks(self, category: str = "") -> tuple[TaskView, ...]:
        reply = self._call(self._stub.ListTasks, runner_pb2.ListTasksRequest(category=category))
        return tuple(convert.task_view_from_pb(task) for task in reply.tasks)

    def get_task(self, address: str) -> TaskView:
        return convert.task_view_from_pb(self._call(self._stub.GetTask, runner_pb2.GetTaskRequest(address=address)))

    def workspace(self, address: str, folder: Path | str, force: bool = False) -> tuple[str, ...]:
        """Write the workspace of task `address` into `folder` from GetTask alone (TASK.md, the
        editable files under candidate/, the other baseline files under context/); returns the
        paths written. A non-empty folder is refused (FolderNotEmpty) unless `force`."""
        return write_workspace(self.get_task(address), Path(folder), force=force)

    def open_attempt(self, task: str) -> Attempt:
        return convert.attempt_from_pb(self._call(self._stub.OpenAttempt, runner_pb2.OpenAttemptRequest(task=task)))

    def get_attempt(self, attempt: str) -> Attempt:
        return convert.attempt_from_pb(self._call(self._stub.GetAttempt, runner_pb2.GetAttemptRequest(id=attempt)))

    def evaluate(
        self,
        candidate: Candidate,
        attempt: str = "",
        on_progress: Callable[[Progress], None] | None = None,
        check_only: bool = False,
    ) -> Evaluation:
        """Send `candidate` (within `attempt`; empty for operators) and wait for its Evaluation.
        `check_only`: a free check (compile and the declared cases; no iteration spent)."""
        request = runner_pb2.EvaluateRequest(
            attempt=attempt, candidate=convert.candidate_to_pb(candidate), check_only=check_only
        )
        return self._throttled(lambda: self._follow(self._stub.Evaluate, request, on_progress))

    def reproduce(self, evaluation: str, on_progress: Callable[[Progress], None] | None = None) -> Evaluation:
        """Operators: run the finished evaluation `evaluation` again on the runner, past its score
        cache, and wait for the new Evaluation (GetEvaluation still answers the stored one)."""
        request = runner_pb2.ReproduceRequest(evaluation=evaluation, request_id=uuid.uuid4().hex)
        return self._throttled(lambda: self._follow(self._stub.Reproduce, request, on_progress))

    def _follow(
        self, method: Callable[..., Any], request: object, on_progress: Callable[[Progress], None] | None
    ) -> Evaluation:
        """A streamed call (Evaluate, Reproduce) followed to its evaluation; sent again when it breaks."""
        for retry in range(EVALUATE_RETRIES + 1):
            try:
                stream = method(request, metadata=self._metadata, timeout=self._evaluate_timeout_s)
                for message in stream:
                    progress = convert.progress_from_pb(message)
                    if on_progress is not None:
                        on_progress(progress)
                    if progress.evaluation is not None:
                        return progress.evaluation
                raise ArenaError("the runner ended the evaluation without a result")
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or retry == EVALUATE_RETRIES:
                    raise_arena_error(error, self.address)
                time.sleep(min(2.0**retry, 10.0))
        raise AssertionError("unreachable")

    def submit(self, attempt: str, evaluation: str) -> Attempt:
        request = runner_pb2.SubmitRequest(attempt=attempt, evaluation=evaluation)
        return convert.attempt_from_pb(self._call(self._stub.Submit, request))

    def get_evaluation(self, evaluation: str) -> Evaluation:
        reply = self._call(self._stub.GetEvaluation, runner_pb2.GetEvaluationRequest(id=evaluation))
        return convert.evaluation_from_pb(reply)

    def leaderboard(self, category: str = "") -> tuple[LeaderboardRow, ...]:
        reply = self._call(self._stub.Leaderboard, runner_pb2.LeaderboardRequest(category=category))
        return tuple(convert.leaderboard_row_from_pb(row) for row in reply.rows)

    def finalize(self, attempt_id: str, folder: Path | str, agent_ended: bool = True, wait: bool = True) -> Attempt:
        """Operators: close attempt `attempt_id`, when its agent did not submit, with the runner's own
        evaluation of the files in `folder` (the workspace's candidate/); no iteration is spent. An
        attempt already submitted comes back unchanged. `agent_ended`: its agent's process has ended
        (the caller ran it), so this may come before the deadline; False: refused (AttemptOpen) until
        the deadline. `wait`: return once that evaluation finished, raising its error if it failed."""
        candidate = Candidate(task="", files=read_folder(Path(folder)))
        request = runner_pb2.FinalizeRequest(
            attempt=attempt_id, candidate=convert.candidate_to_pb(candidate), agent_ended=agent_ended
        )
        attempt = convert.attempt_from_pb(self._call(self._stub.Finalize, request))
        if wait and attempt.finalized:
            self.wait_for_evaluation(attempt.final_evaluation)
        return attempt

    def wait_for_evaluation(self, evaluation: str) -> Evaluation:
        """GetEvaluation, asked again (pauses growing to 2 s) while the job is queued or running."""
        began, pause = time.monotonic(), 0.05
        while True:
            try:
                return self.get_evaluation(evaluation)
            except NotReady:
                if self._evaluate_timeout_s is not None and time.monotonic() - began > self._evaluate_timeout_s:
                    raise
            time.sleep(pause)
            pause = min(2.0, pause * 2)

    def record_usage(self, attempt_id: str, usage: Usage, trajectory: bytes, name: str) -> None:
        """Operators: store what the attempt's agent spent and its event stream (at most 64 MiB; sent
        and kept gzip-compressed), replacing any recorded before."""
        compressed = compress_trajectory(trajectory)
        if len(compressed) > MAX_TRAJECTORY_WIRE_BYTES:
            raise InvalidRequest(
                f"the trajectory is {len(compressed)} bytes compressed, more than the {MAX_TRAJECTORY_WIRE_BYTES} "
                "bytes a request may carry: cut the event stream"
            )
        request = runner_pb2.RecordUsageRequest(
            attempt=attempt_id, usage=convert.usage_to_pb(usage), trajectory_gzip=compressed, trajectory_name=name
        )
        self._call(self._stub.RecordUsage, request)

    def trajectory(self, attempt_id: str) -> bytes:
        """The event stream recorded for the attempt (its agent's or, for operators, any)."""
        reply = self._call(self._stub.GetTrajectory, runner_pb2.GetTrajectoryRequest(attempt=attempt_id))
        return inflate_trajectory(reply.content_gzip)

    def _call(self, method: Callable[..., Reply], request: object) -> Reply:
        def once() -> Reply:
            try:
                return method(request, metadata=self._metadata, timeout=self._timeout_s)
            except grpc.RpcError as error:
                raise_arena_error(error, self.address)

        return self._throttled(once)

    @staticmethod
    def _throttled(call: Callable[[], Reply]) -> Reply:
        """call(), sent again while a limit refuses it (errors.Throttled), with pauses that grow
        from 0.1 s to 5 s (and a random part, so refused clients do not return in step)."""
        waited, pause = 0.0, 0.1
        while True:
            try:
                return call()
            except errors.Throttled:
                if waited >= THROTTLED_WAIT_S:
                    raise
            sleep = pause * (0.5 + random.random())
            time.sleep(sleep)
            waited, pause = waited + sleep, min(5.0, pause * 2)


def raise_arena_error(error: grpc.RpcError, address: str) -> NoReturn:
    """Raise the arena exception the runner raised, named in the call's trailing metadata."""
    names = [value for key, value in (error.trailing_metadata() or ()) if key == ERROR_KIND_KEY]
    named = getattr(errors, names[0], None) if names else None
    if isinstance(named, type) and issubclass(named, ArenaError):
        kind: type[ArenaError] = named
    else:
        kind = CODE_ERRORS.get(error.code(), ArenaError)
    message = error.details() or str(error.code())
    if not names and error.code() == grpc.StatusCode.UNAVAILABLE:
        message = f"cannot reach the runner at {address}: {message}"
    raise kind(message) from None
