"""Leftovers of killed runs: the harness parent's `arena-run-<pid>-*` folders in the temporary
directory, which a killed runner (SIGKILL, a crash, a power cut) never removes.

`sweep_run_folders` removes those whose owner is gone, when a runner starts. The owner is the
process whose id the folder's name records; a folder is left alone while that process lives
(another runner's, or an `arena evaluate` in progress), while its owner cannot be told (a name
with no pid), and when it is not ours (another user's, a symlink).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

from arena.limits.usage import start_ticks

log = logging.getLogger(__name__)

RUN_FOLDER_PREFIX = "arena-run-"
# arena-run-<owner pid>-<mkdtemp's suffix, which never holds a "-">
OWNED_RUN_FOLDER = re.compile(r"arena-run-(?P<pid>[1-9][0-9]*)-[^-]+")
# /proc's start time is in clock ticks after a boot time given in whole seconds: this much
# slack keeps an owner that created its folder within the same second from looking newer.
START_TIME_SLACK_S = 2.0


def sweep_run_folders(root: Path | None = None) -> list[Path]:
    """Remove the run folders in `root` (default: the temporary directory) whose owner process
    is gone; returns those removed."""
    root = Path(root or tempfile.gettempdir())
    removed = []
    for folder in sorted(root.glob(RUN_FOLDER_PREFIX + "*")):
        match = OWNED_RUN_FOLDER.fullmatch(folder.name)
        if match is None:
            continue  # no owner recorded: it may belong to a live run
        try:
            info = folder.lstat()
        except FileNotFoundError:
            continue  # its owner removed it meanwhile
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if owner_alive(int(match["pid"]), info.st_ctime):
            continue
        remove_tree(folder)
        removed.append(folder)
    if removed:
        log.info("removed %d run folder(s) of runs whose process is gone", len(removed))
    return removed


def owner_alive(pid: int, folder_changed_at: float) -> bool:
    """Process `pid` exists and could have made a folder last changed at `folder_changed_at`.

    A process that started after that is a later process with a reused id: the owner is gone.
    The folder's ctime is used because nobody can set it back (unlike its mtime)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    started = process_start_time(pid)
    return started is None or started <= folder_changed_at + START_TIME_SLACK_S


def process_start_time(pid: int) -> float | None:
    """When `pid` started (seconds since the epoch), from /proc; None where that cannot be read."""
    ticks = start_ticks(pid)
    try:
        boot_line = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
    except (OSError, StopIteration):
        return None
    return None if ticks is None else int(boot_line.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")


def remove_tree(folder: Path) -> None:
    """Remove `folder` and everything in it, even folders a candidate made unreadable; never
    follows a symlink out of it."""
    os.chmod(folder, stat.S_IRWXU)
    for parent, folders, _ in os.walk(folder):
        for name in folders:  # opened before os.walk descends into it
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)

    def report(_: Callable[..., Any], path: str, error: Any) -> None:
        log.warning("cannot remove %s from a left-over run folder: %s", path, error[1])

    shutil.rmtree(folder, onerror=report)
