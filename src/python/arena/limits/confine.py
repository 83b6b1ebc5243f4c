"""The kernel's backstop behind the watch (limits.py), for one process and all it starts.

    python confine.py TASKS [--cpus LIST] [--join FILE]... -- PROGRAM ARGS...

sets the limits below on itself (with --cpus, "0-47,96", keeps itself to those CPUs; with --join,
writes itself into a control group's cgroup.procs FILE: cgroups.py) and becomes PROGRAM: the way
a parent that runs gRPC threads
confines a child (a preexec_fn would fork the whole process, which gRPC's fork handlers may stop;
this starts by vfork and execs). It imports nothing of arena, so it needs no import path.
"""

from __future__ import annotations

import os
import resource
import sys

FILE_BYTES = 1 << 30  # RLIMIT_FSIZE: one file at most
OOM_FIRST = 1000  # oom_score_adj: the OOM killer's first choice


def confine(tasks: int) -> None:
    """No core dumps, files <= 1 GiB, at most `tasks` tasks of this user (RLIMIT_NPROC: in a user
    namespace of the sandbox's own, the sandbox's tasks; otherwise the host's of this user, and
    root ignores it), and the OOM killer's first choice: set before anything untrusted runs, and
    inherited by all it starts (none can raise them again)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, _lowered(resource.RLIMIT_FSIZE, FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_NPROC, _lowered(resource.RLIMIT_NPROC, tasks))
    try:
        with open("/proc/self/oom_score_adj", "w") as file:
            file.write(str(OOM_FIRST))
    except OSError:
        pass  # no /proc: the watch still reads memory


def _lowered(kind: int, wanted: int) -> tuple[int, int]:
    """(soft, hard) no higher than this process's hard limit: an unprivileged process cannot raise it."""
    hard = resource.getrlimit(kind)[1]
    value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    return value, value


def cpu_list(text: str) -> set[int]:
    """ "0-2,5" -> {0, 1, 2, 5} (as the kernel lists CPUs)."""
    cpus: set[int] = set()
    for item in text.strip().split(","):
        if item:
            low, _, high = item.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def main() -> None:
    given, cpus, joins = sys.argv[1:], None, []
    while len(given) > 2 and given[1] in ("--cpus", "--join"):
        if given[1] == "--cpus":
            cpus = given[2]
        else:
            joins.append(given[2])
        given = given[:1] + given[3:]
    if len(given) < 3 or given[1] != "--" or not given[0].isdigit():
        sys.exit("usage: confine.py TASKS [--cpus LIST] [--join FILE]... -- PROGRAM ARGS...")
    for join in joins:  # first: all it starts is born in the group
        try:
            with open(join, "w") as file:
                file.write(str(os.getpid()))
        except OSError as error:
            sys.exit(f"cannot join the control group {join!r}: {error}")
    confine(int(given[0]))
    try:
        if cpus is not None:
            os.sched_setaffinity(0, cpu_list(cpus))
        os.execvp(given[2], given[2:])
    except (OSError, ValueError) as error:
        sys.exit(f"cannot start {given[2]!r}: {error}")


if __name__ == "__main__":
    main()
