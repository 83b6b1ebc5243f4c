"""The exception that stops a run with a status: raised by the pipeline (run.py) and the judge's
timing (judged_timing.py), which thus need not import each other for it."""

from __future__ import annotations


class Verdict(Exception):
    """Stops the run with a status (CHEAT_DETECTED, COMPILE_ERROR, ...) and a message."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
