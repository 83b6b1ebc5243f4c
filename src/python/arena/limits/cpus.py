"""A lane's CPUs: each harness child of a GPU lane runs on CPUs of its own, so that what one lane's
candidate or compiler does on the host (spinning threads, a parallel build) does not slow another
lane's judge while it times.

Affinity is set from outside on every thread of the child's tree before the job (threads and
processes started later inherit it). Any thread may ask the kernel for other CPUs again, so the
watch also reads every thread's allowed CPUs and stops a sandbox that went outside its lane's.
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

from arena.limits.confine import cpu_list

PROC = "/proc"


def split(cpus: Iterable[int], parts: int) -> list[frozenset[int]]:
    """`cpus` in `parts` contiguous shares as even as can be (the first ones a CPU more), in
    order; each share at least one CPU (CPUs are then shared round-robin when there are fewer)."""
    ordered = sorted(set(cpus))
    if parts <= 0 or not ordered:
        raise ValueError(f"cannot share {len(ordered)} CPU(s) among {parts} lane(s)")
    if len(ordered) < parts:
        return [frozenset({ordered[index % len(ordered)]}) for index in range(parts)]
    size, extra = divmod(len(ordered), parts)
    shares, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        shares.append(frozenset(ordered[start:end]))
        start = end
    return shares


def spelled(cpus: Iterable[int]) -> str:
    """{0, 1, 2, 5} -> "0-2,5" (as the kernel lists them)."""
    ordered, ranges = sorted(set(cpus)), list[list[int]]()
    for cpu in ordered:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{low}-{high}" if high > low else str(low) for low, high in ranges)


def parsed(text: str) -> frozenset[int]:
    """ "0-2,5" -> {0, 1, 2, 5}."""
    return frozenset(cpu_list(text))


def threads_of(pids: Sequence[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            found += [int(tid) for tid in os.listdir(f"{PROC}/{pid}/task")]
        except OSError:
            continue
    return found


def pin(pids: Sequence[int], cpus: frozenset[int]) -> None:
    """Every thread of the processes `pids` onto `cpus` (what they start later inherits it)."""
    for tid in threads_of(pids):
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):
            continue  # ended meanwhile


def strays(pids: Sequence[int], cpus: frozenset[int]) -> frozenset[int]:
    """The CPUs outside `cpus` that some thread of `pids` may run on (empty: all keep to them)."""
    outside: set[int] = set()
    for tid in threads_of(pids):
        try:
            with open(f"{PROC}/{tid}/status", "rb") as file:
                lines = file.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(b"Cpus_allowed_list:"):
                outside |= parsed(line.split(b":", 1)[1].decode()) - cpus
    return frozenset(outside)
