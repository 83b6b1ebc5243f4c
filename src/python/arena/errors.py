"""Caller and system faults: one small hierarchy whose messages are safe to show users.

Candidate failures (a kernel that does not compile, is wrong or slow) are results, never these.
The CLI maps them to exit codes in one place; the runner maps them to gRPC status codes.
"""

from __future__ import annotations


class ArenaError(Exception):
    """A fault the user can act on; str(error) is the message to show."""


class TaskDeclarationError(ArenaError):
    """A kernel_task declaration is malformed; the message names the BUILD file, target and field."""


class UnknownTask(ArenaError):
    """No kernel_task has the requested address."""


class InvalidCandidate(ArenaError):
    """A candidate's files break the task's allow-list or size limits."""


class BudgetExhausted(ArenaError):
    """An agent attempt has used its wall-clock or iteration budget."""


class Throttled(BudgetExhausted):
    """A limit on the rate of calls or on open streams refused this call for now: unlike a spent
    budget it passes, and clients try again after a pause."""


class NoDevice(ArenaError):
    """No GPU (or no backend able to run the task) is available."""


class UnusableEnvironment(ArenaError):
    """The measurement environment (the Python harness children run under) is missing, broken,
    or lacks a package the harness needs, or has one too old."""


class Unisolated(ArenaError):
    """Nothing isolates untrusted code here (no OS sandbox, no container): candidate code on this
    runner, or an agent's processes in `arena agent run`; and the operator did not allow running
    it without one (--allow-unisolated)."""


class PermissionDenied(ArenaError):
    """The caller may not do what it asked (e.g. read exemplars or hidden cases)."""


# Caller faults only the runner raises; the service maps each to a gRPC status code.


class Unauthenticated(ArenaError):
    """No bearer token, or one the runner does not know."""


class NotFound(ArenaError):
    """No attempt or evaluation has the requested id."""


class InvalidRequest(ArenaError):
    """A request is malformed (a missing field, an evaluation from another attempt)."""


class NotReady(ArenaError):
    """The evaluation is still queued or running; ask again later."""


class AttemptOpen(ArenaError):
    """The attempt is still running (before its deadline, its agent not known to have ended), so
    the runner may not yet take its final candidate for it (Finalize)."""


class QueueFull(BudgetExhausted):
    """The runner holds as many pending jobs as it accepts; retry later."""


class JobFailed(ArenaError):
    """The runner failed to evaluate a candidate (never the candidate's fault); the iteration is refunded."""


class StateBusy(ArenaError):
    """Another runner already uses this state folder."""
