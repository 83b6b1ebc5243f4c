"""The processes below one, as the host's /proc shows them (harness children and their workers)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from arena.limits.usage import start_ticks


def descendants(root: int) -> dict[int, tuple[str, int]]:
    """Processes below `root`: pid -> (command line, real uid)."""
    found: dict[int, tuple[str, int]] = {}
    parents = {root}
    for entry in sorted(Path("/proc").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 0):
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parent, uid = re.search(r"PPid:\s+(\d+)", status), re.search(r"Uid:\s+(\d+)", status)
        if parent and uid and int(parent.group(1)) in parents:
            parents.add(int(entry.name))
            found[int(entry.name)] = (command, int(uid.group(1)))
    return found


def harness_processes(root: int) -> dict[int, tuple[str, int]]:
    """The Python processes of the harness children below `root`: judges, and their workers'
    (apart.py: waiter, init, worker). Those that run `python -m arena.harness.X` themselves: the
    command lines of bubblewrap and of the sandbox's first process (limits/lifeline.py) name the
    child too."""
    return {pid: found for pid, found in descendants(root).items() if _runs_harness(found[0])}


def _runs_harness(command: str) -> bool:
    words = command.split()
    return len(words) >= 3 and words[1] == "-m" and words[2].startswith("arena.harness.")


def judges(root: int) -> list[int]:
    """The judges (`python -m arena.harness.child`) below `root`."""
    return [pid for pid, (command, _) in harness_processes(root).items() if command.endswith("-m arena.harness.child ")]


def running_in(folder: Path) -> list[int]:
    """The processes whose working folder is `folder` or lies inside it."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cwd = os.readlink(entry / "cwd") if entry.name.isdigit() else ""
        except OSError:
            continue
        if cwd == str(folder) or cwd.startswith(f"{folder}/"):
            found.append(int(entry.name))
    return found


def ended_process() -> tuple[int, int]:
    """The pid and start time (limits.usage.start_ticks) of a process that has run and ended."""
    process = subprocess.Popen(["sleep", "0"])
    started = start_ticks(process.pid)
    process.wait()
    assert started is not None and start_ticks(process.pid) is None
    return process.pid, started
