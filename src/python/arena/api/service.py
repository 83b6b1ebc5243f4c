"""The gRPC servicer: each method converts the request, calls one Runner method, converts back.

`status_code_of` is the one mapping from arena errors to gRPC status codes; anything else a
method raises is logged and answered INTERNAL, so a fault never stops the server. Every call
passes its identity's rate limit, and every Evaluate stream the stream caps (limits.py); an
error's message is cut to a bounded size (quoting.py) before it goes back.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Iterator, TypeVar

import grpc

from arena.api import convert
from arena.api.limits import CallGate
from arena.api.wire import ERROR_KIND_KEY
from arena.errors import (
    ArenaError,
    AttemptOpen,
    BudgetExhausted,
    InvalidCandidate,
    InvalidRequest,
    JobFailed,
    NoDevice,
    NotFound,
    NotReady,
    PermissionDenied,
    TaskDeclarationError,
    Unauthenticated,
    Unisolated,
    UnknownTask,
)
from arena.runner.auth import Identity, Tokens
from arena.runner.quoting import cut
from arena.runner.runner import Runner
from arena.v1 import evaluation_pb2, runner_pb2, runner_pb2_grpc, task_pb2

log = logging.getLogger(__name__)

# Looked up by the error's class, then its bases in order (QueueFull finds BudgetExhausted).
STATUS_CODES: dict[type[ArenaError], grpc.StatusCode] = {
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    UnknownTask: grpc.StatusCode.NOT_FOUND,
    NotFound: grpc.StatusCode.NOT_FOUND,
    InvalidCandidate: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidRequest: grpc.StatusCode.INVALID_ARGUMENT,
    BudgetExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,  # QueueFull too
    NotReady: grpc.StatusCode.UNAVAILABLE,
    NoDevice: grpc.StatusCode.FAILED_PRECONDITION,
    Unisolated: grpc.StatusCode.FAILED_PRECONDITION,
    TaskDeclarationError: grpc.StatusCode.FAILED_PRECONDITION,
    AttemptOpen: grpc.StatusCode.FAILED_PRECONDITION,
    JobFailed: grpc.StatusCode.INTERNAL,
}

Method = TypeVar("Method", bound=Callable[..., Any])


def status_code_of(error: ArenaError) -> grpc.StatusCode:
    for kind in type(error).__mro__:
        if kind in STATUS_CODES:
            return STATUS_CODES[kind]
    return grpc.StatusCode.INTERNAL


def abort_with_error(context: grpc.ServicerContext, error: ArenaError) -> None:
    """Abort the call with the error's status code; the error's class name travels in trailing metadata."""
    context.set_trailing_metadata(((ERROR_KIND_KEY, type(error).__name__),))
    context.abort(status_code_of(error), cut(str(error)))


def answer_errors(method: Method) -> Method:
    """The servicer's edge: arena errors become their status codes, anything else INTERNAL."""

    @functools.wraps(method)
    def wrapper(self: RunnerServicer, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except ArenaError as error:
            abort_with_error(context, error)
        except Exception:
            log.exception("%s failed", method.__name__)
            context.abort(grpc.StatusCode.INTERNAL, "internal error in the runner")

    return wrapper  # type: ignore[return-value]


class Gatekeeper(grpc.ServerInterceptor):
    """Every call's token and rate, from its metadata alone, before its request is parsed: a call
    without a known token, or over its identity's rate, is refused without a protobuf decoded (a
    stream of large unauthenticated requests cost every other caller the parsing before)."""

    def __init__(self, tokens: Tokens, gate: CallGate) -> None:
        self._tokens, self._gate = tokens, gate

    def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        try:
            self._gate.admit(self._tokens.identify(details.invocation_metadata).agent)
        except ArenaError as error:
            return _refusal(continuation(details), error)
        return continuation(details)


def _refusal(handler: Any, error: ArenaError) -> Any:
    """A handler for the call's method that answers `error` and never parses the request."""
    if handler is None:
        return None  # an unknown method: gRPC's own UNIMPLEMENTED

    def refuse(request: bytes, context: grpc.ServicerContext) -> None:
        abort_with_error(context, error)

    if handler.response_streaming:  # Evaluate, Reproduce; the runner has no request streams
        return grpc.unary_stream_rpc_method_handler(refuse)
    return grpc.unary_unary_rpc_method_handler(refuse)


class RunnerServicer(runner_pb2_grpc.RunnerServicer):
    def __init__(self, runner: Runner, tokens: Tokens, gate: CallGate) -> None:
        self._runner = runner
        self._tokens = tokens
        self._gate = gate

    def _identify(self, context: grpc.ServicerContext) -> Identity:
        """The caller (its rate already admitted by the Gatekeeper, before the request was parsed)."""
        return self._tokens.identify(context.invocation_metadata())

    @answer_errors
    def ListTasks(
        self, request: runner_pb2.ListTasksRequest, context: grpc.ServicerContext
    ) -> runner_pb2.ListTasksResponse:
        views = self._runner.list_tasks(self._identify(context), request.category)
        return runner_pb2.ListTasksResponse(tasks=[convert.task_view_to_pb(view) for view in views])

    @answer_errors
    def GetTask(self, request: runner_pb2.GetTaskRequest, context: grpc.ServicerContext) -> task_pb2.Task:
        return convert.task_view_to_pb(self._runner.get_task(self._identify(context), request.address))

    @answer_errors
    def OpenAttempt(self, request: runner_pb2.OpenAttemptRequest, context: grpc.ServicerContext) -> runner_pb2.Attempt:
        return convert.attempt_to_pb(self._runner.open_attempt(self._identify(context), request.task))

    @answer_errors
    def GetAttempt(self, request: runner_pb2.GetAttemptRequest, context: grpc.ServicerContext) -> runner_pb2.Attempt:
        return convert.attempt_to_pb(self._runner.get_attempt(self._identify(context), request.id))

    @answer_errors
    def Evaluate(
        self, request: runner_pb2.EvaluateRequest, context: grpc.ServicerContext
    ) -> Iterator[runner_pb2.EvaluateProgress]:
        return self._follow(
            context,
            lambda identity: self._runner.evaluate(
                identity,
                request.attempt,
                convert.candidate_from_pb(request.candidate),
                context.is_active,
                check=request.check_only,
            ),
        )

    @answer_errors
    def Reproduce(
        self, request: runner_pb2.ReproduceRequest, context: grpc.ServicerContext
    ) -> Iterator[runner_pb2.EvaluateProgress]:
        return self._follow(
            context,
            lambda identity: self._runner.reproduce(
                identity, request.evaluation, request.request_id, context.is_active
            ),
        )

    def _follow(
        self, context: grpc.ServicerContext, start: Callable[[Identity], Iterator[Any]]
    ) -> Iterator[runner_pb2.EvaluateProgress]:
        """A streamed call (Evaluate, Reproduce): `start` accepts (or refuses) the job in the call
        itself; only following the job streams, under the identity's stream caps."""
        identity = self._identify(context)
        release = self._gate.open_stream(identity.agent)
        context.add_callback(release)  # however the call ends, cancelled included
        try:
            progress = start(identity)
        except BaseException:
            release()
            raise
        return self._stream(progress, context, release)

    def _stream(
        self, progress: Iterator[Any], context: grpc.ServicerContext, release: Callable[[], None]
    ) -> Iterator[runner_pb2.EvaluateProgress]:
        try:
            for step in progress:
                yield convert.progress_to_pb(step)
        except ArenaError as error:
            abort_with_error(context, error)
        except Exception:
            log.exception("Evaluate failed while streaming")
            context.abort(grpc.StatusCode.INTERNAL, "internal error in the runner")
        finally:
            release()

    @answer_errors
    def Submit(self, request: runner_pb2.SubmitRequest, context: grpc.ServicerContext) -> runner_pb2.Attempt:
        return convert.attempt_to_pb(self._runner.submit(self._identify(context), request.attempt, request.evaluation))

    @answer_errors
    def GetEvaluation(
        self, request: runner_pb2.GetEvaluationRequest, context: grpc.ServicerContext
    ) -> evaluation_pb2.Evaluation:
        return convert.evaluation_to_pb(self._runner.get_evaluation(self._identify(context), request.id))

    @answer_errors
    def Leaderboard(
        self, request: runner_pb2.LeaderboardRequest, context: grpc.ServicerContext
    ) -> runner_pb2.LeaderboardResponse:
        rows = self._runner.leaderboard(self._identify(context), request.category)
        return runner_pb2.LeaderboardResponse(rows=[convert.leaderboard_row_to_pb(row) for row in rows])

    @answer_errors
    def Finalize(self, request: runner_pb2.FinalizeRequest, context: grpc.ServicerContext) -> runner_pb2.Attempt:
        identity = self._identify(context)
        candidate = convert.candidate_from_pb(request.candidate)
        return convert.attempt_to_pb(self._runner.finalize(identity, request.attempt, candidate, request.agent_ended))

    @answer_errors
    def RecordUsage(
        self, request: runner_pb2.RecordUsageRequest, context: grpc.ServicerContext
    ) -> runner_pb2.RecordUsageResponse:
        self._runner.record_usage(
            self._identify(context),
            request.attempt,
            convert.usage_from_pb(request.usage),
            request.trajectory_name,
            request.trajectory_gzip,
        )
        return runner_pb2.RecordUsageResponse()

    @answer_errors
    def GetTrajectory(
        self, request: runner_pb2.GetTrajectoryRequest, context: grpc.ServicerContext
    ) -> runner_pb2.Trajectory:
        name, content = self._runner.trajectory(self._identify(context), request.attempt)
        return runner_pb2.Trajectory(attempt=request.attempt, name=name, content_gzip=content)


def add_runner_service(server: grpc.Server, runner: Runner, tokens: Tokens, gate: CallGate) -> None:
    """Serve `runner` on `server` (server.py stays free of generated code), behind the Gatekeeper
    that shares `gate` (the server was made with it); the gate's limits must leave threads of the
    server's pool free for unary calls (CallLimits.total_streams below its size)."""
    runner_pb2_grpc.add_RunnerServicer_to_server(RunnerServicer(runner, tokens, gate), server)
