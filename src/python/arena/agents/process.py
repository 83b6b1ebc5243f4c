"""Running an agent's command: its own process group, its stdout collected, the whole group
killed at the deadline (plus a grace), and killed again at the end so no child outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Mapping

from arena.errors import ArenaError

TERM_WAIT_S = 2.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True)
class Finished:
    stdout: bytes  # the agent's event stream
    returncode: int | None  # None: killed at the deadline
    wall_s: float


def run_agent_process(
    argv: tuple[str, ...], cwd: Path, env: Mapping[str, str], stop_at: float, stderr_path: Path
) -> Finished:
    """Run `argv` in `cwd` with exactly `env` until it exits or time.time() reaches `stop_at`."""
    started = time.monotonic()
    with open(stderr_path, "wb") as stderr:
        try:
            process = subprocess.Popen(
                argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
                start_new_session=True,  # its own process group: one killpg reaches every child
            )  # fmt: skip
        except OSError as error:
            raise ArenaError(f"cannot start the agent {argv[0]!r}: {error}") from None
        chunks: list[bytes] = []
        assert process.stdout is not None
        reader = threading.Thread(target=_drain, args=(process.stdout, chunks), daemon=True)
        reader.start()
        try:
            returncode: int | None = process.wait(timeout=max(0.0, stop_at - time.time()))
        except subprocess.TimeoutExpired:
            returncode = None
            _kill_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=TERM_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        _kill_group(process.pid, signal.SIGKILL)  # what it left running (or ignored SIGTERM)
        process.wait()
        reader.join(timeout=TERM_WAIT_S)
    return Finished(b"".join(chunks), returncode, time.monotonic() - started)


def _drain(stream: IO[bytes], chunks: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
        chunks.append(chunk)


def _kill_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
