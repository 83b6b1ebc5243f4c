"""Waiting in tests on the thing itself, never on a sleep a slow machine can outlast.

WAIT_S only bounds a hang: the conditions waited for take milliseconds, and a busy machine
shared with other builds may take seconds; neither comes near it, so reaching it means
something is stuck, not slow.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")
WAIT_S = 60.0
POLL_S = 0.01


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    timeout_s: float = WAIT_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """The first true value of `condition()` (an exception in `ignoring` counts as not yet),
    asked every POLL_S; AssertionError naming `what` once `timeout_s` passed without one."""
    deadline = time.monotonic() + timeout_s
    while True:
        value: T | None = None
        try:
            value = condition()
        except ignoring:
            pass
        if value:
            return value
        assert time.monotonic() < deadline, f"still waiting after {timeout_s:g} s for {what}"
        time.sleep(POLL_S)
