"""What a sandbox holds on its host, measured from outside it: its processes and their threads, their
private memory, and the disk below its writable folders (with the files it deleted but keeps open).

Everything is read from /proc and the folders themselves, never asked of the sandbox: its own
processes could lie. The readings are cheap enough to repeat every half second (a few ms for a
job folder of a few thousand files and a host of a few hundred processes).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from arena.limits.cpus import strays

PROC = Path("/proc")
BLOCK = 512  # st_blocks' unit
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class Usage:
    processes: int  # the root process and everything below it
    threads: int  # theirs, all told (a process is one thread or more)
    memory: int  # bytes of their private memory (anonymous and shared-memory pages resident)
    disk: int  # bytes allocated below the folders, and to deleted files the processes hold open
    files: int  # entries below the folders
    strays: frozenset[int] = frozenset()  # CPUs outside its lane's that a thread may run on (cpus.py)


def process_tree(root: int) -> list[int]:
    """`root` and every process below it, as this host's /proc sees them now (orphans of a PID
    namespace are reparented to its init, which is below `root`). Empty when `root` is gone."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        parent = _parent(entry.path)
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    if not (PROC / str(root)).exists():
        return []
    found, waiting = [], [root]
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        waiting += children.get(pid, [])
    return found


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks after boot (/proc/PID/stat's starttime: with the pid, it
    tells a process from a later one that reuses its id); None when no such process runs."""
    try:
        with open(PROC / str(pid) / "stat", "rb") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()  # after the command name, which may hold ")"
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def pid_namespace_id() -> int:
    """This process's PID namespace (its inode): the pids that /proc shows here; 0 where unknown."""
    try:
        return os.stat(PROC / "self" / "ns" / "pid").st_ino
    except OSError:
        return 0


def _parent(folder: str) -> int | None:
    try:
        with open(os.path.join(folder, "stat"), "rb") as file:
            text = file.read()
    except OSError:  # gone since the scan, or not ours to read
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    fields = text[text.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def memory_and_threads(pids: Iterable[int]) -> tuple[int, int]:
    """Bytes of the processes' resident anonymous and shared-memory pages (RssAnon + RssShmem: what
    they took themselves, not the libraries they share with every other process), and their threads."""
    memory = threads = 0
    for pid in pids:
        try:
            with open(PROC / str(pid) / "status", "rb") as file:
                lines = file.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith((b"RssAnon:", b"RssShmem:")):
                memory += int(line.split()[1]) * 1024  # kB
            elif line.startswith(b"Threads:"):
                threads += int(line.split()[1])
    return memory, threads


def held_deleted(pids: Iterable[int]) -> int:
    """Bytes of the deleted regular files the processes keep open: disk they hold that no folder shows."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        fds = PROC / str(pid) / "fd"
        try:
            entries = list(os.scandir(fds))
        except OSError:
            continue
        for entry in entries:
            try:
                if not os.readlink(entry.path).endswith(" (deleted)"):
                    continue
                info = os.stat(entry.path)  # the open file itself, through /proc
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * BLOCK
    return total


def folder_usage(folders: Iterable[Path], stop_at_files: int | None = None) -> tuple[int, int]:
    """(bytes allocated, entries) below `folders`, each file once however many links it has, links
    not followed. A folder the sandbox closed to its owner (mode 000) is opened again to look inside:
    a sandbox cannot hide what it writes. Stops counting past `stop_at_files` entries."""
    seen: set[tuple[int, int]] = set()
    allocated = entries = 0
    waiting = [str(folder) for folder in folders]
    while waiting:
        folder = waiting.pop()
        try:
            listing = _listing(folder)
        except OSError:
            continue
        for entry in listing:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            entries += 1
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                allocated += info.st_blocks * BLOCK
            if stat.S_ISDIR(info.st_mode):
                waiting.append(entry.path)
            if stop_at_files is not None and entries > stop_at_files:
                return allocated, entries
    return allocated, entries


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except PermissionError:
        # Ours (a runner that is not root shares its uid with the sandbox): let ourselves in.
        os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
        with os.scandir(folder) as listing:
            return list(listing)


def usage(
    root: int, folders: Iterable[Path], stop_at_files: int | None = None, cpus: frozenset[int] | None = None
) -> Usage:
    """The whole reading for the process tree under `root` and its writable `folders`; with `cpus`
    (its lane's), which other CPUs its threads may run on."""
    pids = process_tree(root)
    memory, threads = memory_and_threads(pids)
    allocated, entries = folder_usage(folders, stop_at_files)
    outside = strays(pids, cpus) if cpus is not None else frozenset()
    return Usage(len(pids), threads, memory, allocated + held_deleted(pids), entries, outside)


def size_text(count: int) -> str:
    """1536 -> "1.5 KiB", as the limits' messages say sizes."""
    for unit in ("T", "G", "M", "K"):
        if count >= UNITS[unit]:
            return f"{count / UNITS[unit]:.1f} {unit}iB"
    return f"{count} bytes"
