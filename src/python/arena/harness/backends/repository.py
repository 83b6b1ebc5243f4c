"""Repository tasks: the code base with the candidate's files overlaid, built and benchmarked by
its own commands (the harness's timing is still what is scored)."""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO


def command_env() -> dict[str, str]:
    """A build's or bench's environment: the harness's, with byte code (a compileall) written
    under scratch ($TMPDIR), so the read-only baseline/ and task/ folders can be built in place;
    without the harness's PYTHONSAFEPATH, so `python3 bench.py` imports the code base beside it."""
    scratch = Path(os.environ.get("TMPDIR") or tempfile.gettempdir())
    env = {key: value for key, value in os.environ.items() if key != "PYTHONSAFEPATH"}
    path = os.environ.get("ARENA_COMMAND_PATH", env.get("PATH", ""))  # with the job's `python` shims (child.py)
    return {**env, "PATH": path, "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}


def build_repository(directory: Path, command: str) -> tuple[bool, str]:
    """Run the task's declared build command in `directory`; (succeeded, output)."""
    if not command:
        return True, ""
    done = subprocess.run(command, shell=True, cwd=directory, capture_output=True, text=True, env=command_env())
    return done.returncode == 0, f"$ {command}\n{done.stdout}{done.stderr}"


BENCH_TIMEOUT_S = 120.0
# Bytes of a bench's output the judge keeps, half from its start and half from its end: the bench
# is the candidate's code, and whatever it prints the judge reads while it runs.
BENCH_OUTPUT_BYTES = 64 * 1024
_CHUNK = 1 << 16


class _Kept:
    """A pipe drained to its end in a thread, keeping its first and last `limit` / 2 bytes; the
    thread holds the pipe and closes it at its end (never while it reads: its number could be
    another file's by then)."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_bytes = self.total = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            while chunk := os.read(stream.fileno(), _CHUNK):
                self._keep(chunk)

    def _keep(self, chunk: bytes) -> None:
        with self.lock:
            self.total += len(chunk)
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail.append(chunk)
                self.tail_bytes += len(chunk)
                while self.tail_bytes - len(self.tail[0]) >= self.half:
                    self.tail_bytes -= len(self.tail.popleft())

    def text(self, wait_s: float = 5.0) -> str:
        """What was kept, decoded (bytes that are not UTF-8 replaced), with how much was left out;
        waits at most `wait_s` for the pipe's end (a process that escaped its group may hold it)."""
        self.thread.join(wait_s)
        with self.lock:
            head, tail, total = bytes(self.head), b"".join(self.tail)[-self.half :], self.total
        left_out = total - len(head) - len(tail)
        middle = f"\n... {left_out} bytes of output left out ...\n".encode() if left_out > 0 else b""
        return (head + middle + tail).decode("utf-8", errors="replace")


def run_repository_bench(directory: Path, command: str, timeout_s: float = BENCH_TIMEOUT_S) -> tuple[bool, str]:
    """Run the code base's own benchmark once in `directory`; (succeeded, output). Never raises."""
    if not command:
        return True, ""
    # The candidate's code, run by the judge: in namespaces of its own (apart.py), like the worker,
    # so it cannot signal the judge; in its own process group, so a timeout stops all it started.
    apart = [sys.executable, "-I", str(Path(__file__).resolve().parent.parent / "apart.py"), "/bin/sh", "-c", command]
    try:
        process = subprocess.Popen(
            apart,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=command_env(),
            start_new_session=True,
        )
    except OSError as error:
        return False, f"$ {command}\ncannot run: {error}"
    assert process.stdout is not None
    output = _Kept(process.stdout, BENCH_OUTPUT_BYTES)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):  # the group ended just now
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return False, f"$ {command}\n{output.text()}\nstopped after {timeout_s:g} s"
    return process.returncode == 0, f"$ {command}\n{output.text()}"
