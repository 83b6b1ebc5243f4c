"""Caller faults only the runner raises, beside the shared ones in arena.errors.

service.py maps each to a gRPC status code; their messages are safe to show agents.
"""

from __future__ import annotations

from arena.errors import ArenaError, BudgetExhausted


class Unauthenticated(ArenaError):
    """No bearer token, or one the runner does not know."""


class NotFound(ArenaError):
    """No attempt or evaluation has the requested id."""


class InvalidRequest(ArenaError):
    """A request is malformed (a missing field, an evaluation from another attempt)."""


class NotReady(ArenaError):
    """The evaluation is still queued or running; ask again later."""


class QueueFull(BudgetExhausted):
    """The runner holds as many pending jobs as it accepts; retry later."""


class JobFailed(ArenaError):
    """The runner failed to evaluate a candidate (never the candidate's fault); the iteration is refunded."""


class StateBusy(ArenaError):
    """Another runner already uses this state folder."""
