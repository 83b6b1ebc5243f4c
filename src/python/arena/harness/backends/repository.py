"""Repository tasks: the code base with the candidate's files overlaid, built and benchmarked by
its own commands (the harness's timing is still what is scored)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path


def command_env() -> dict[str, str]:
    """A build's or bench's environment: the harness's, with byte code (a compileall) written
    under scratch ($TMPDIR), so the read-only baseline/ and task/ folders can be built in place;
    without the harness's PYTHONSAFEPATH, so `python3 bench.py` imports the code base beside it."""
    scratch = Path(os.environ.get("TMPDIR") or tempfile.gettempdir())
    env = {key: value for key, value in os.environ.items() if key != "PYTHONSAFEPATH"}
    return {**env, "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}


def build_repository(directory: Path, command: str) -> tuple[bool, str]:
    """Run the task's declared build command in `directory`; (succeeded, output)."""
    if not command:
        return True, ""
    done = subprocess.run(command, shell=True, cwd=directory, capture_output=True, text=True, env=command_env())
    return done.returncode == 0, f"$ {command}\n{done.stdout}{done.stderr}"


BENCH_TIMEOUT_S = 120.0


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
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=command_env(),
            start_new_session=True,
        )
    except OSError as error:
        return False, f"$ {command}\ncannot run: {error}"
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return False, f"$ {command}\nstopped after {timeout_s:g} s"
    return process.returncode == 0, f"$ {command}\n{output}"
