"""The fast tier of task validation: every task's declaration, reference, baseline and wrong
candidate on its untimed cases, many tasks through one child process (fast_child.py).

The child imports torch once for all of them, where the full tier (full.py) starts a judge and a
worker for every evaluation. A task that crashes the child or outlasts its time limit fails alone:
the child is killed and a new one takes the tasks after it.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from arena.environment.measurement import current_measurement
from arena.validation.findings import Findings

TASK_TIMEOUT_S = 300.0  # one task's checks at most (the slowest interpreted task took ~40 s)
STARTUP_S = 300.0  # the child's start (an `import torch` on a busy machine) at most
_TAIL = 4000  # bytes of the child's output quoted when it dies


def _child_command(repo_root: Path, fd: int, addresses: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    measurement = current_measurement()
    source_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(dict.fromkeys([source_root, *measurement.path]))
    env = {**os.environ, "PYTHONPATH": path}
    command = [measurement.python, "-m", "arena.validation.fast_child", str(repo_root), str(fd), *addresses]
    return command, env


class ChildReader:
    """The child's JSON lines, each task's within `timeout_s` of its start line (the child's start,
    its imports, within STARTUP_S); `timed_out` says whether a deadline ended the reading."""

    def __init__(self, stream: int, child: subprocess.Popen[bytes], timeout_s: float) -> None:
        self.stream, self.child, self.timeout_s = stream, child, timeout_s
        self.timed_out = False

    def __iter__(self) -> Iterator[dict]:
        selector = selectors.DefaultSelector()
        selector.register(self.stream, selectors.EVENT_READ)
        buffer, deadline = b"", time.monotonic() + max(self.timeout_s, STARTUP_S)
        while True:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                self.timed_out = True
                self.child.kill()
                return
            chunk = os.read(self.stream, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            *whole, buffer = buffer.split(b"\n")
            for line in whole:
                message = json.loads(line)
                if "start" in message:
                    deadline = time.monotonic() + self.timeout_s
                yield message


def check_tasks_fast(
    repo_root: Path,
    addresses: Sequence[str],
    timeout_s: float = TASK_TIMEOUT_S,
    progress: Callable[[str, Findings, float], None] = lambda address, findings, seconds: None,
) -> dict[str, Findings]:
    """Findings for every address, in order; `progress` hears each as it is done."""
    found: dict[str, Findings] = {}
    pending = list(addresses)
    while pending:
        read_end, write_end = os.pipe()
        command, env = _child_command(repo_root, write_end, pending)
        log = tempfile.TemporaryFile()  # a file, not a pipe: a task that prints much never blocks
        child = subprocess.Popen(
            command, env=env, pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        os.close(write_end)
        current, began = "", time.monotonic()
        reader = ChildReader(read_end, child, timeout_s)
        try:
            for message in reader:
                if "start" in message:
                    current, began = str(message["start"]), time.monotonic()
                    continue
                findings = Findings.from_dict(message["findings"])
                found[current] = findings
                progress(current, findings, float(message.get("seconds", 0.0)))
                current = ""
        finally:
            os.close(read_end)
            child.kill()
            child.wait()
            log.seek(max(0, log.seek(0, os.SEEK_END) - _TAIL))
            tail = log.read().decode(errors="replace")
            log.close()
        done = [a for a in pending if a in found]
        if len(done) == len(pending):
            break
        if not current and not done:  # the child never reached a task: no later one would either
            why = f"did not start within {max(timeout_s, STARTUP_S):g} s" if reader.timed_out else "could not start"
            for address in pending:
                found[address] = Findings(
                    failures=[f"the fast checks' process {why} (exit {child.returncode}):\n{tail}"]
                )
                progress(address, found[address], 0.0)
            break
        # The child died or was killed within `current`: that task fails, a new child takes the rest.
        failed = current or pending[len(done)]
        why = (
            f"took over {timeout_s:g} s"
            if reader.timed_out
            else f"ended the checking process (exit {child.returncode})"
        )
        found[failed] = Findings(failures=[f"the fast checks {why}:\n{tail}"])
        progress(failed, found[failed], time.monotonic() - began)
        pending = pending[pending.index(failed) + 1 :]
    return {address: found[address] for address in addresses}
