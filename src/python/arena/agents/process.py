"""Running an agent's command: its own process group, its stdout collected, the whole group
killed at the deadline (plus a grace) or at its first reading over the limits (arena.limits), and
killed again at the end so no child outlives it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Mapping

from arena.errors import ArenaError
from arena.limits.ipc import bound_ipc
from arena.limits.limits import Limits, Watch, confined, grouped, wait_watched

TERM_WAIT_S = 2.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True)
class Finished:
    stdout: bytes  # the agent's event stream
    returncode: int | None  # None: killed at the deadline or over a limit
    wall_s: float
    stopped: str = ""  # the limit it went over ("ran 1100 processes, over the limit of 1024"), if any


def run_agent_process(
    argv: tuple[str, ...],
    cwd: Path,
    env: Mapping[str, str],
    stop_at: float,
    stderr_path: Path,
    limits: Limits | None = None,
    watched: Iterable[Path] = (),
    sandboxed: bool = False,
    pass_fds: tuple[int, ...] = (),
) -> Finished:
    """Run `argv` in `cwd` with exactly `env` until it exits or time.time() reaches `stop_at`; with
    `limits`, confined (the kernel's backstop) and watched with the folders it writes, `watched`,
    and when `sandboxed` (an IPC namespace of its own) its shared memory bounded too. `pass_fds`:
    descriptors it inherits (a sandbox's lifeline)."""
    started = time.monotonic()
    # Confined by a first process of its own (confine.py), not a preexec_fn: this process runs
    # gRPC threads, whose fork handlers a forked child could stop in before its exec.
    if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:  # said here, not by confine.py
        raise ArenaError(f"cannot start the agent {argv[0]!r}: not found on its PATH")
    # Its own control group where the host allows one: closed at the end, with what still runs in it.
    with grouped(limits) as group, open(stderr_path, "wb") as stderr:
        command = list(argv) if limits is None else confined(argv, limits, group=group)
        try:
            process = subprocess.Popen(
                command, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
                start_new_session=True,  # its own process group: one killpg reaches every child
                pass_fds=pass_fds,
            )  # fmt: skip
        except OSError as error:
            raise ArenaError(f"cannot start the agent {argv[0]!r}: {error}") from None
        chunks: list[bytes] = []
        assert process.stdout is not None
        reader = threading.Thread(target=_drain, args=(process.stdout, chunks), daemon=True)
        reader.start()
        deadline = time.monotonic() + stop_at - time.time()
        watch = None if limits is None else Watch(process.pid, watched, limits, group=group)
        if limits is not None and sandboxed:  # as soon as bubblewrap has made the namespace
            bound_ipc(process.pid, limits.memory)
        returncode = wait_watched(process, deadline, watch)
        if returncode is None:
            _kill_group(process.pid, signal.SIGKILL if watch is not None and watch.breached else signal.SIGTERM)
            try:
                process.wait(timeout=TERM_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        _kill_group(process.pid, signal.SIGKILL)  # what it left running (or ignored SIGTERM)
        process.wait()
        reader.join(timeout=TERM_WAIT_S)
        stopped = watch.settle() if watch else ""  # with what its group's limits did
    return Finished(b"".join(chunks), returncode, time.monotonic() - started, stopped)


def _drain(stream: IO[bytes], chunks: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
        chunks.append(chunk)


def _kill_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
