"""Containers a dead runner left behind: named after the process that started them, removed by the
next executor that finds them.

A container is the engine's, not the runner's child: a runner killed mid-run (OOM, a restart)
leaves it running its candidate on the GPU beside every job of the runner that follows, until its
own harness timeout. So each container's name says which process started it, uniquely on a host
across reboots and reused pids (`arena-<boot>-<pid namespace>-<pid>-<start time>-<random>`), and
an executor, before its first run, removes every container so named whose process is gone: one
from an earlier boot, or from its own PID namespace whose pid no longer runs with that start time.
One started from another PID namespace (a runner in a container of its own, sharing the engine) is
left alone: its process cannot be seen from here.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from arena.limits.usage import pid_namespace_id, start_ticks

PREFIX = "arena-"
_NAME = re.compile(r"^arena-([0-9a-f]{12})-(\d+)-(\d+)-(\d+)-[0-9a-f]+$")


@dataclass(frozen=True)
class Launcher:
    """A process, as a container's name records it."""

    boot: str  # the first 12 hex digits of the kernel's boot id
    namespace: int  # its PID namespace's inode
    pid: int
    start: int  # its start time, in clock ticks after boot (limits.usage.start_ticks)

    def gone(self, here: Launcher) -> bool:
        """Whether this process has ended, as seen from `here` (this process): False when it
        cannot be told (another PID namespace)."""
        if self.boot != here.boot:
            return True  # the host has rebooted since
        if self.namespace != here.namespace:
            return False
        return start_ticks(self.pid) != self.start


def this_process() -> Launcher | None:
    """This process as a Launcher; None where /proc cannot say (not Linux)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
    except OSError:
        return None
    start = start_ticks(os.getpid())
    return None if start is None or len(boot) != 12 else Launcher(boot, pid_namespace_id(), os.getpid(), start)


def container_name(launcher: Launcher | None) -> str:
    """A new container's name, recording `launcher` where there is one."""
    if launcher is None:
        return f"{PREFIX}{secrets.token_hex(8)}"
    return f"{PREFIX}{launcher.boot}-{launcher.namespace}-{launcher.pid}-{launcher.start}-{secrets.token_hex(4)}"


def launcher_of(name: str) -> Launcher | None:
    """The process a container's name records; None for a name of another shape."""
    found = _NAME.match(name)
    if found is None:
        return None
    boot, namespace, pid, start = found.groups()
    return Launcher(boot, int(namespace), int(pid), int(start))


def left_behind(names: list[str], here: Launcher | None) -> list[str]:
    """Of the containers `names`, those whose launcher has ended."""
    if here is None:
        return []
    found = [(name, launcher_of(name)) for name in names]
    return [name for name, launcher in found if launcher is not None and launcher.gone(here)]
