"""The pool server's children (PostgreSQL, BuildGrid) die with it, however soon it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.pool.processes import die_with_parent

# Starts `sleep` as the pool server starts its children, prints its pid and exits at once.
LAUNCHER = """
import functools, os, signal, subprocess
from arena.pool.processes import die_with_parent
child = subprocess.Popen(["sleep", "30"], preexec_fn=functools.partial(die_with_parent, signal.SIGKILL, os.getpid()))
print(child.pid, flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_child_dies_with_the_process_that_started_it() -> None:
    variables = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    launched = subprocess.run([sys.executable, "-c", LAUNCHER], env=variables, capture_output=True, text=True)
    child = int(launched.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_child_whose_parent_is_already_gone_ends_before_it_execs() -> None:
    # The parent-death signal is asked for after the fork: a parent that died in between would
    # never send it. The child sees another parent then (the reaper) and ends at once.
    pid = os.fork()
    if pid == 0:
        try:
            die_with_parent(signal.SIGKILL, os.getppid() + 1_000_000)  # not its parent: as if it had died
        finally:
            os._exit(0)  # reached only if die_with_parent did not end it
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1
