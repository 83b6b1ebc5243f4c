"""The pool server's children (PostgreSQL, BuildGrid): they die with it, and stop in order."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here, never between fork and exec


def die_with_parent(signal_number: int, parent: int) -> None:
    """In the child, before exec: receive `signal_number` when the process that started it,
    `parent` (its pid, read before the fork), dies; end now if it already has: the signal is asked
    for after the fork, and a parent gone in between would never send it."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def stop_process(process: subprocess.Popen[bytes], number: int = signal.SIGTERM, timeout_s: float = 30.0) -> None:
    """Send `number`, wait up to `timeout_s`, then kill."""
    if process.poll() is None:
        process.send_signal(number)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
