"""Per-identity limits on calls: open Evaluate streams and request rate.

Each Evaluate stream holds one of the server's threads while it follows its job, so streams are
capped per identity and in all, the total below the server's thread pool (server.py
MAX_WORKERS): however many streams are open, unary calls still find a thread. A refusal is
Throttled (RESOURCE_EXHAUSTED; clients try again after a pause) naming the limit, and touches only the identity over it
(the total cap aside, which only Evaluate calls meet).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from arena.errors import Throttled


@dataclass(frozen=True)
class CallLimits:
    streams_per_identity: int = 16  # an operator's `arena suite --runner` keeps 16 in flight
    total_streams: int = 96  # below the server's 128 threads: 32 stay for unary calls
    calls_per_second: float = 50.0  # sustained, per identity
    burst: int = 100  # calls an identity may make at once after a quiet spell

    def __post_init__(self) -> None:
        if min(self.streams_per_identity, self.total_streams, self.burst) < 1 or self.calls_per_second <= 0:
            raise ValueError(f"every call limit must be positive: {self}")


@dataclass
class _Bucket:
    tokens: float
    updated: float


@dataclass
class CallGate:
    """Admits calls and streams under `limits`; thread-safe."""

    limits: CallLimits = field(default_factory=CallLimits)
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _buckets: dict[str, _Bucket] = field(default_factory=dict, repr=False)
    _streams: dict[str, int] = field(default_factory=dict, repr=False)

    def admit(self, agent: str) -> None:
        """Count one call of `agent` (a token bucket); Throttled when over its rate."""
        limits = self.limits
        with self._lock:
            now = self.clock()
            bucket = self._buckets.setdefault(agent, _Bucket(float(limits.burst), now))
            bucket.tokens = min(float(limits.burst), bucket.tokens + (now - bucket.updated) * limits.calls_per_second)
            bucket.updated = now
            if bucket.tokens < 1:
                raise Throttled(
                    f"agent {agent!r} is over its request rate ({limits.calls_per_second:g} calls/s, "
                    f"bursts of {limits.burst}); slow down"
                )
            bucket.tokens -= 1

    def open_stream(self, agent: str) -> Callable[[], None]:
        """Count an Evaluate stream of `agent`; returns its release (safe to call more than once)."""
        limits = self.limits
        with self._lock:
            held = self._streams.get(agent, 0)
            if held >= limits.streams_per_identity:
                raise Throttled(
                    f"agent {agent!r} already holds {held} open Evaluate streams, the most one identity may "
                    f"(streams_per_identity={limits.streams_per_identity}); close one, or follow a job with "
                    "GetEvaluation"
                )
            if sum(self._streams.values()) >= limits.total_streams:
                raise Throttled(
                    f"the runner already follows {limits.total_streams} Evaluate streams, the most it holds "
                    "at once (total_streams); retry later, or follow a job with GetEvaluation"
                )
            self._streams[agent] = held + 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if released.is_set():
                    return
                released.set()
                self._streams[agent] -= 1
                if not self._streams[agent]:
                    del self._streams[agent]

        return release

    def open_streams(self, agent: str) -> int:
        with self._lock:
            return self._streams.get(agent, 0)
