"""Control groups: the kernel's own bounds on a sandbox, where this host lets the runner make them.

The watch (limits.py) reads a sandbox every half second and rlimits bound each of its processes,
but some things fall between: a thread that leaves its lane's CPUs and comes back between two
readings, memory taken faster than a reading, tasks of a root runner's agent (RLIMIT_NPROC does
not apply to root), pages of a tmpfs or of System V shared memory that no process holds. A group of
the sandbox's own closes them: `cpuset` keeps every thread to the lane's CPUs (the kernel refuses
any other affinity), `memory` makes the kernel kill the sandbox's own processes at its limit (no
other process's), `pids` refuses its tasks past the limit, whoever runs them.

Where: cgroup v2 (one hierarchy) or v1 (one per controller), below the runner's own group (or
ARENA_CGROUPS=PATH, a v2 group delegated to the runner), in a group "arena" of groups named
arena-<runner's PID namespace>-<runner pid>-<n>. ARENA_CGROUPS=off uses none. A host that lets the runner make none (not
root and nothing delegated, /sys/fs/cgroup read-only in a container) keeps the watch alone, and
`found()` says why.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from arena.errors import ArenaError
from arena.limits.cpus import spelled
from arena.limits.usage import pid_namespace_id, size_text

VARIABLE = "ARENA_CGROUPS"
CONTROLLERS = ("memory", "pids", "cpuset")
ARENA = "arena"  # the runner's group of sandboxes' groups
KILL_WAIT_S = 5.0
_numbers = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where this runner makes sandboxes' groups: `parents[controller]` is the folder of the group
    "arena" for that controller (v2: the same folder for all)."""

    version: int
    parents: Mapping[str, Path]

    def describe(self) -> str:
        folders = sorted({str(path) for path in self.parents.values()})
        return f"cgroup v{self.version} ({', '.join(CONTROLLERS)}) in {', '.join(folders)}"


@dataclass(frozen=True)
class Found:
    hierarchy: Hierarchy | None
    reason: str  # why there is none ("" when there is)


@functools.cache
def found() -> Found:
    """This process's hierarchy for sandboxes (made once), or why there is none."""
    return find(os.environ.get(VARIABLE, ""))


def find(setting: str, proc: Path = Path("/proc/self")) -> Found:
    """The hierarchy for `setting` ("", "auto", "off" or a v2 group's folder), made ready: the group
    "arena" made, its controllers enabled, groups of runners that have died removed."""
    setting = setting.strip()
    if setting == "off":
        return Found(None, f"{VARIABLE}=off")
    given = setting not in ("", "auto")
    try:
        hierarchy = _v2(Path(setting), given=True) if given else _mounted(proc)
    except OSError as error:
        if given:
            raise ArenaError(f"{VARIABLE}={setting!r}: cannot make sandboxes' groups there: {error}") from None
        return Found(None, f"cannot make groups: {error.strerror or error}")
    except ArenaError as error:
        if given:
            raise
        return Found(None, str(error))
    if hierarchy is None:
        return Found(None, "no cgroup hierarchy with the memory, pids and cpuset controllers is mounted")
    _sweep(hierarchy)
    return Found(hierarchy, "")


def _mounted(proc: Path) -> Hierarchy | None:
    """v1 where all three controllers have a hierarchy of their own, else v2 where it offers them."""
    mounts, own = _mounts(proc / "mountinfo"), _own_groups(proc / "cgroup")
    if all(controller in mounts for controller in CONTROLLERS):
        return _v1(mounts, own)
    if "" in mounts:
        return _v2(mounts[""] / own.get("", "/").lstrip("/"), given=False)
    return None


def _mounts(mountinfo: Path) -> dict[str, Path]:
    """controller -> where its v1 hierarchy's root is mounted; "" -> the v2 hierarchy's. A mount of
    part of a hierarchy (a container's) counts as its root: its groups are the ones seen there."""
    mounts: dict[str, Path] = {}
    for line in mountinfo.read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        where, kind = fields.split()[4], tail.split()
        if kind and kind[0] == "cgroup2":
            mounts.setdefault("", Path(where))
        elif kind and kind[0] == "cgroup" and len(kind) > 2:
            for option in kind[2].split(","):
                if option in CONTROLLERS:
                    mounts.setdefault(option, Path(where))
    return mounts


def _own_groups(cgroup: Path) -> dict[str, str]:
    """controller -> this process's group in its hierarchy ("" -> in the v2 hierarchy)."""
    own: dict[str, str] = {}
    for line in cgroup.read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _v1(mounts: Mapping[str, Path], own: Mapping[str, str]) -> Hierarchy:
    parents = {}
    for controller in CONTROLLERS:
        mount = mounts[controller]
        group = mount / own.get(controller, "/").lstrip("/")
        if not group.is_dir():  # a container's mount of its own part only: its root is ours
            group = mount
        parent = group / ARENA
        parent.mkdir(exist_ok=True)
        if controller == "cpuset":  # v1: a cpuset holds no task until it has CPUs and memory nodes
            for name in ("cpuset.cpus", "cpuset.mems"):
                if not _read(parent / name):
                    _write(parent / name, _read(group / name))
        parents[controller] = parent
    return Hierarchy(1, parents)


def _v2(group: Path, given: bool) -> Hierarchy | None:
    """The group "arena" below `group`, with the controllers enabled for it and for its groups.
    v2 lets a group hand controllers down only when it holds no process itself (the root excepted):
    a runner alone in its own group moves itself into a group "runner" below it."""
    if not (group / "cgroup.controllers").is_file():
        if given:
            raise ArenaError(f"{VARIABLE}={str(group)!r}: not a cgroup v2 group (no cgroup.controllers there)")
        return None
    missing = set(CONTROLLERS) - set(_read(group / "cgroup.controllers").split())
    if missing:  # said either way: an operator delegates them (systemd: Delegate=yes) or names a group
        named = f"{VARIABLE}={str(group)!r}" if given else f"the runner's group {group}"
        raise ArenaError(
            f"{named}: controllers {', '.join(sorted(missing))} are not offered there "
            f"(delegate them to the runner, or set {VARIABLE} to a group that has them)"
        )
    try:
        _enable(group)
    except OSError as error:
        if error.errno != errno.EBUSY or _read(group / "cgroup.procs").split() != [str(os.getpid())]:
            raise
        (group / "runner").mkdir(exist_ok=True)
        _write(group / "runner" / "cgroup.procs", str(os.getpid()))
        _enable(group)
    parent = group / ARENA
    parent.mkdir(exist_ok=True)
    _enable(parent)
    return Hierarchy(2, {controller: parent for controller in CONTROLLERS})


def _enable(group: Path) -> None:
    if set(CONTROLLERS) - set(_read(group / "cgroup.subtree_control").split()):
        _write(group / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))


class Group:
    """One sandbox's group: made with its limits, joined by the sandbox's first process (confine.py
    --join, before it execs), emptied and removed by close()."""

    def __init__(self, hierarchy: Hierarchy, memory: int, tasks: int, cpus: frozenset[int] | None = None) -> None:
        self.hierarchy = hierarchy
        self.memory = memory
        self.tasks = tasks
        name = f"{_prefix()}-{os.getpid()}-{next(_numbers)}"
        self.folders = {controller: parent / name for controller, parent in hierarchy.parents.items()}
        made: list[Path] = []
        try:
            for folder in dict.fromkeys(self.folders.values()):
                folder.mkdir()
                made.append(folder)
            self._settle(cpus)
        except OSError as error:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise ArenaError(f"cannot make the sandbox's control group {name}: {error}") from None
        self._closed = False

    @property
    def joins(self) -> list[Path]:
        """The cgroup.procs files the sandbox's first process writes itself into."""
        return [folder / "cgroup.procs" for folder in dict.fromkeys(self.folders.values())]

    def _settle(self, cpus: frozenset[int] | None) -> None:
        memory, pids, cpuset = (self.folders[c] for c in CONTROLLERS)
        if self.hierarchy.version == 2:
            _write(memory / "memory.max", str(self.memory))
            if (memory / "memory.swap.max").exists():
                _write(memory / "memory.swap.max", "0")
            _write(memory / "memory.oom.group", "1")  # the kernel kills the sandbox whole, not one process
        else:
            _write(memory / "memory.limit_in_bytes", str(self.memory))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # no swapping out past the limit
                _write(memory / "memory.memsw.limit_in_bytes", str(self.memory))
        _write(pids / "pids.max", str(self.tasks))
        if self.hierarchy.version == 1:
            _write(cpuset / "cpuset.mems", _read(cpuset.parent / "cpuset.mems"))
        self.keep_to(cpus)

    def keep_to(self, cpus: frozenset[int] | None) -> None:
        """Its threads on `cpus` (None: on every CPU of its parent), now and whatever they ask."""
        cpuset = self.folders["cpuset"]
        allowed = _read(cpuset.parent / ("cpuset.cpus.effective" if self.hierarchy.version == 2 else "cpuset.cpus"))
        _write(cpuset / "cpuset.cpus", allowed if cpus is None else spelled(cpus))

    def breach(self) -> str:
        """What the kernel did to it at its limits, as the end of a sentence ("" when nothing)."""
        memory, pids = self.folders["memory"], self.folders["pids"]
        events = _counts(memory / ("memory.events" if self.hierarchy.version == 2 else "memory.oom_control"))
        if events.get("oom_kill", 0):
            return f"was killed by the kernel at its memory limit of {size_text(self.memory)}"
        if _counts(pids / "pids.events").get("max", 0):
            return f"was refused a process or thread over its limit of {self.tasks} tasks"
        return ""

    def close(self) -> None:
        """Kill what is left in it, then remove it (idempotent; a runner started later removes what
        a dead one left: _sweep)."""
        if self._closed:
            return
        self._closed = True
        for folder in reversed(list(dict.fromkeys(self.folders.values()))):
            _remove(folder)


def _remove(folder: Path) -> None:
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        try:
            if (folder / "cgroup.kill").exists():
                _write(folder / "cgroup.kill", "1")
            else:
                for pid in _read(folder / "cgroup.procs").split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY or time.monotonic() >= deadline:
                return  # left for the next runner's sweep
            time.sleep(0.02)


def _sweep(hierarchy: Hierarchy) -> None:
    """Remove the groups of runners that have died (killed before they could close them): of this
    PID namespace only, where a pid that /proc lacks is one that has ended (a runner in another
    container sharing the hierarchy keeps its groups)."""
    for parent in set(hierarchy.parents.values()):
        for folder in parent.glob(f"{_prefix()}-*-*"):
            pid = folder.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                _remove(folder)


def _prefix() -> str:
    """arena-<this PID namespace's inode>: whose pids a group's name holds."""
    return f"arena-{pid_namespace_id()}"


def _counts(path: Path) -> dict[str, int]:
    try:
        pairs = (line.split() for line in _read(path).splitlines())
        return {pair[0]: int(pair[1]) for pair in pairs if len(pair) == 2 and pair[1].isdigit()}
    except OSError:
        return {}


def _read(path: Path) -> str:
    return path.read_text().strip()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as file:  # one write(2): a control file takes a value per write
        file.write(value)
