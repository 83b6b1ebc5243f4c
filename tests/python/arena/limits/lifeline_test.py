"""A sandbox ends with whoever launched it, killed at any moment of its start (limits.Lifeline).

bubblewrap's --die-with-parent asks for the parent-death signal in its child after the clone: a
launcher killed in that window (seen: up to 20 ms after the start, on a 2-core machine) left the
sandbox running, so a killed pool worker's candidate went on beside the next job (pool_test
failed in CI). Here a launcher starts a sandbox whose program would write `woke` after 1.5 s, and
kills itself at once or a few milliseconds later. Without the lifeline (the launcher's `first`
left empty) the first test failed 3 times in 3 here: the launch killed at 0 ms went on."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.environment.probe import sandbox_tool
from arena.harness.sandbox import Layout, sandbox_command
from arena.limits.lifeline import LAUNCHER_GONE
from arena.limits.limits import Lifeline
from arena_testing.processes import running_in

PYTHON = shutil.which("python3", path="/usr/bin:/bin")  # one every sandbox shows (its system folders)
WAKES = "sleep 1.5; echo > woke"

pytestmark = pytest.mark.skipif(
    not sandbox_tool() or PYTHON is None, reason="needs bubblewrap's namespaces and the system's python3"
)

# Started as its own process, so that it can die in the middle of the sandbox's start.
LAUNCHER = """
import os, signal, subprocess, sys, time
from pathlib import Path
from arena.harness.sandbox import Layout, sandbox_command
from arena.limits.limits import Lifeline
work, delay, python = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
layout = Layout(work, work / "tmp", work, (), work / "home", work / "identity")
lifeline = Lifeline()
first = lifeline.prefix(python) if python else ()
argv = sandbox_command(["/bin/sh", "-c", sys.argv[4]], layout, first_process=first)
subprocess.Popen(argv, cwd=work, start_new_session=True, pass_fds=(lifeline.fd,))
time.sleep(delay)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _folder(tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    (work / "tmp").mkdir(parents=True)
    work.chmod(0o777)  # the sandbox's user (nobody, in a user namespace) writes `woke` there
    return work


def _launch_and_die(work: Path, delay: float, python: str) -> None:
    variables = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    launcher = subprocess.run([sys.executable, "-c", LAUNCHER, str(work), str(delay), python, WAKES], env=variables)
    assert launcher.returncode == -signal.SIGKILL


def _gone_within(work: Path, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while running_in(work) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running_in(work)


def test_a_launcher_killed_while_the_sandbox_starts_takes_it_along(tmp_path: Path) -> None:
    assert PYTHON is not None
    delays = (0.0, 0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3)
    folders = [_folder(tmp_path, f"run{i}") for i in range(len(delays))]
    for work, delay in zip(folders, delays):
        _launch_and_die(work, delay, PYTHON)
    for work, delay in zip(folders, delays):
        left = _gone_within(work, 10)
        assert not left, f"killed {delay * 1000:g} ms after the start, still running: {left}"
        assert not (work / "woke").exists(), f"killed {delay * 1000:g} ms after the start, the program went on"


def _sandboxed(work: Path, script: str, lifeline: Lifeline) -> list[str]:
    assert PYTHON is not None
    layout = Layout(work, work / "tmp", work, (), work / "home", work / "identity")
    return sandbox_command(["/bin/sh", "-c", script], layout, first_process=lifeline.prefix(PYTHON))


def test_a_sandbox_whose_launcher_lives_runs_to_its_end(tmp_path: Path) -> None:
    work = _folder(tmp_path, "run")
    with Lifeline() as lifeline:
        done = subprocess.run(_sandboxed(work, WAKES, lifeline), cwd=work, pass_fds=(lifeline.fd,), timeout=60)
    assert done.returncode == 0 and (work / "woke").exists()


@pytest.mark.parametrize(("script", "status"), [("exit 3", 3), ("kill -TERM $$", 128 + signal.SIGTERM)])
def test_the_program_s_status_is_the_sandbox_s(tmp_path: Path, script: str, status: int) -> None:
    work = _folder(tmp_path, "run")
    with Lifeline() as lifeline:
        done = subprocess.run(_sandboxed(work, script, lifeline), cwd=work, pass_fds=(lifeline.fd,), timeout=60)
    assert done.returncode == status


def test_a_lifeline_broken_before_the_start_ends_the_sandbox_at_once(tmp_path: Path) -> None:
    work = _folder(tmp_path, "run")
    lifeline = Lifeline()
    argv = _sandboxed(work, WAKES, lifeline)
    os.close(lifeline._write)  # the launcher gone before its sandbox started
    lifeline._open.remove(lifeline._write)
    started = time.monotonic()
    done = subprocess.run(argv, cwd=work, pass_fds=(lifeline.fd,), timeout=60)
    lifeline.close()
    assert done.returncode == LAUNCHER_GONE and time.monotonic() - started < 1.5
    assert not _gone_within(work, 10) and not (work / "woke").exists()
