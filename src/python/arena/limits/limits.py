"""How much of the host one sandbox may hold, and the watch that stops it when it holds more.

A harness child runs candidate code and an agent's sandbox runs whatever the agent writes: both
are hostile until proved otherwise. Without bounds one of them could fork until the host has no
process ids left, write until its disk is full, or take memory until the kernel's OOM killer
picks some other process (the runner). So every sandbox gets, from its parent:
- a watch (`Watch`, read from outside every half second: usage.py) that stops it at the first
  reading over a limit: processes, threads, private memory, disk and files below its writable folders
  (its /tmp included: a folder on disk, not a tmpfs in memory that no one is charged for);
- a backstop in the kernel for what half a second could still do (confine.py): the OOM killer
  takes its processes first, a file is at most 1 GiB, and the user's tasks are capped below the
  host's process ids so that a fork bomb that outruns the watch cannot take them all;
- where the host lets the runner make them, a control group of its own (cgroups.py): the kernel
  keeps its threads to its lane's CPUs, kills it at its memory limit (its tmpfs and shared memory
  pages included) and refuses its tasks past the limit, whoever it runs as.

The limits are the operator's: ARENA_JOB_LIMITS (harness children) and ARENA_AGENT_LIMITS (agents),
e.g. "processes=1024,threads=16384,memory=16G,disk=8G,files=100000"; a key left out keeps its
default.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from arena.errors import ArenaError
from arena.limits import confine as confine_script
from arena.limits import lifeline as lifeline_script
from arena.limits.cgroups import Group, found
from arena.limits.confine import confine
from arena.limits.cpus import spelled
from arena.limits.usage import UNITS, Usage, size_text, usage

JOB_VARIABLE = "ARENA_JOB_LIMITS"
AGENT_VARIABLE = "ARENA_AGENT_LIMITS"
EVERY_S = 0.5  # between two readings
DUTY = 10  # at least this many times a reading's own cost between two readings
CONFINE_SCRIPT = os.path.abspath(confine_script.__file__)


@dataclass(frozen=True)
class Limits:
    processes: int
    threads: int  # of all its processes: RLIMIT_NPROC counts these too
    memory: int  # bytes
    disk: int  # bytes
    files: int

    def breach(self, seen: Usage) -> str:
        """What `seen` holds over these limits, as the end of a sentence ("" when nothing)."""
        if seen.processes > self.processes:
            return f"ran {seen.processes} processes, over the limit of {self.processes}"
        if seen.threads > self.threads:
            return f"ran {seen.threads} threads, over the limit of {self.threads}"
        if seen.memory > self.memory:
            return f"held {size_text(seen.memory)} of memory, over the limit of {size_text(self.memory)}"
        if seen.disk > self.disk:
            return f"wrote {size_text(seen.disk)} to disk, over the limit of {size_text(self.disk)}"
        if seen.files > self.files:
            return f"made more than {self.files} files, the limit"
        return ""


def job_limits(env: Mapping[str, str] = os.environ) -> Limits:
    """A harness child's: its compilers and a repository's build may run a few hundred processes."""
    default = Limits(processes=1024, threads=16384, memory=_half_the_memory(), disk=8 << 30, files=100_000)
    return _configured(default, JOB_VARIABLE, env)


def agent_limits(env: Mapping[str, str] = os.environ) -> Limits:
    """An agent's: a CLI, its tools and their caches (an npm or pip install) in its workspace and HOME."""
    default = Limits(processes=1024, threads=16384, memory=_half_the_memory(), disk=16 << 30, files=500_000)
    return _configured(default, AGENT_VARIABLE, env)


def _half_the_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def _configured(default: Limits, variable: str, env: Mapping[str, str]) -> Limits:
    text = env.get(variable, "").strip()
    if not text:
        return default
    known = {field.name for field in fields(Limits)}
    given: dict[str, int] = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        key = key.strip()
        found = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*", value, re.IGNORECASE)
        if key not in known or found is None or int(found.group(1)) <= 0:
            raise ArenaError(
                f"{variable}={text!r}: expected comma-separated key=value with keys {', '.join(sorted(known))} "
                "and positive values (sizes may end in K, M, G or T)"
            )
        given[key] = int(found.group(1)) * UNITS[found.group(2).upper()]
    return replace(default, **given)


class Watch:
    """The readings of one sandbox: the process `root` started for it and its writable `folders`.
    check() reads again once EVERY_S (or ten times the last reading's cost) has passed and says
    what the first breach was ("" for none)."""

    def __init__(
        self,
        root: int,
        folders: Iterable[Path],
        limits: Limits,
        cpus: frozenset[int] | None = None,
        group: Group | None = None,
    ) -> None:
        self.root = root
        self.folders = tuple(folders)
        self.limits = limits
        self.cpus = cpus  # its lane's (cpus.py): a thread that may run elsewhere is a breach
        self.group = group  # its control group, when it has one: what the kernel did at its limits
        self.breached = ""
        self._next = 0.0

    def check(self) -> str:
        now = time.monotonic()
        if not self.breached and now >= self._next:
            seen = usage(self.root, self.folders, stop_at_files=self.limits.files, cpus=self.cpus)
            self.breached = self.limits.breach(seen) or self._strayed(seen) or self._kernel()
            took = time.monotonic() - now
            # A slow reading (a folder of 100,000 files: 0.25 s) is made less often: the watch
            # keeps to a tenth of one core, beside a judge that may be timing.
            self._next = now + max(EVERY_S, DUTY * took)
        return self.breached

    def settle(self) -> str:
        """The breach, read once more from the kernel's events after the sandbox ended (a process
        its group's memory limit killed between two readings)."""
        self.breached = self.breached or self._kernel()
        return self.breached

    def _kernel(self) -> str:
        return "" if self.group is None else self.group.breach()

    def _strayed(self, seen: Usage) -> str:
        if not seen.strays or self.cpus is None:
            return ""
        return f"let threads run on CPUs {spelled(seen.strays)}, outside its lane's ({spelled(self.cpus)})"


def wait_watched(process: subprocess.Popen[bytes], deadline: float, watch: Watch | None) -> int | None:
    """`process`'s exit status, or None once time.monotonic() reaches `deadline` or at the watch's
    first breach (it is then still running: the caller kills it)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or (watch is not None and watch.check()):
            return None
        try:
            return process.wait(timeout=min(left, EVERY_S))
        except subprocess.TimeoutExpired:
            continue


def tasks(limits: Limits) -> int:
    """RLIMIT_NPROC's value for a sandbox with `limits` (it counts threads): the thread limit, and a
    quarter of the host's process ids at most."""
    return min(limits.threads, _process_ids() // 4)


def confine_self(limits: Limits) -> None:
    """The backstop (confine.py) on this process: a harness child before any candidate code."""
    confine(tasks(limits))


def group_for(limits: Limits, cpus: frozenset[int] | None = None) -> Group | None:
    """A control group of its own for a sandbox with `limits`, kept to `cpus` (cgroups.py), where
    this host lets the runner make one; its caller closes it once the sandbox has ended."""
    hierarchy = found().hierarchy
    return None if hierarchy is None else Group(hierarchy, limits.memory, tasks(limits), cpus)


@contextlib.contextmanager
def grouped(limits: Limits | None, cpus: frozenset[int] | None = None) -> Iterator[Group | None]:
    """group_for(limits, cpus) (None without limits) for the block, closed after it: what of the
    sandbox still runs is killed and the group removed."""
    group = None if limits is None else group_for(limits, cpus)
    try:
        yield group
    finally:
        if group is not None:
            group.close()


def confined(
    argv: Sequence[str], limits: Limits, cpus: frozenset[int] | None = None, group: Group | None = None
) -> list[str]:
    """`argv` started through confine.py, which joins `group` (when given), sets the backstop on
    itself (kept to `cpus` when given) and becomes `argv`: by its path, or, run from a zip (a PEX
    that is no venv), as its source text."""
    script = [CONFINE_SCRIPT] if os.path.isfile(CONFINE_SCRIPT) else ["-c", inspect.getsource(confine_script)]
    kept = [] if cpus is None else ["--cpus", spelled(cpus)]
    joins = [] if group is None else [item for join in group.joins for item in ("--join", str(join))]
    return [sys.executable, "-I", "-S", *script, str(tasks(limits)), *kept, *joins, "--", *argv]


class Lifeline:
    """A pipe whose write end this process keeps for as long as a sandbox may live, and whose read
    end that sandbox's first process holds (lifeline.py): when this process dies, however and
    whenever (even while the sandbox is still being made), the sandbox dies with it. Closing it
    ends the sandbox too."""

    def __init__(self) -> None:
        self.fd, self._write = os.pipe()  # neither inherited by other children: pass_fds=(fd,) hands it over
        self._open = [self.fd, self._write]

    def prefix(self, python: str) -> list[str]:
        """The command before the sandbox's own (which it starts): lifeline.py from its source
        text, run by `python` (one the sandbox shows), as the first process of a PID namespace
        the sandbox makes."""
        return [python, "-I", "-S", "-c", inspect.getsource(lifeline_script), str(self.fd), "--"]

    def handed_over(self) -> None:
        """The child has started with the read end: ours is closed, so the pipe breaks when we go."""
        self._close(self.fd)

    def close(self) -> None:
        for fd in list(self._open):
            self._close(fd)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.remove(fd)
            os.close(fd)

    def __enter__(self) -> Lifeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _process_ids() -> int:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return 32768  # the kernel's default
