"""The first process of a sandbox's PID namespace, holding a lifeline to whoever launched it.

    python -I -S -c "$(this file)" FD -- PROGRAM ARGS...

runs PROGRAM and ends when it ends (with its status; 128 + N when signal N killed it), or as soon
as FD, the read end of a pipe whose only write end its launcher holds, reads end of file: the
launcher died. As the namespace's first process its end is the end of every process left there
(the kernel kills them), whatever they did to stay apart (new sessions, process groups).

Why a pipe: bubblewrap's --die-with-parent (and util-linux unshare's --kill-child) ask for the
parent-death signal in the child after the clone, so a launcher killed in between leaves the
sandbox running with nobody to stop it: a killed pool worker's candidate went on beside the next
job (pool_test). A pipe has no such window: when the launcher is already gone, the first poll
reads end of file. It imports nothing of arena: it runs from its source text, with no import path,
inside a sandbox that shows none.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys

_PR_SET_DUMPABLE = 4
LAUNCHER_GONE = 128 + signal.SIGKILL  # the status when the lifeline broke: as if killed


def main() -> None:
    given = sys.argv[1:]
    if len(given) < 3 or given[1] != "--" or not given[0].isdigit():
        sys.exit("usage: lifeline.py FD -- PROGRAM ARGS...")
    lifeline, program = int(given[0]), given[2:]
    # Not traced, nor read through /proc, by the program it starts when they share a uid.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    woken, wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)  # a byte on `woken` for each
    child = os.fork()
    if child == 0:
        _become(program, lifeline, woken, wake)
    watched = select.poll()
    watched.register(lifeline, select.POLLIN)  # POLLHUP and POLLERR are always reported
    watched.register(woken, select.POLLIN)
    while True:
        for fd, _ in watched.poll():
            if fd == lifeline:
                os._exit(LAUNCHER_GONE)  # the kernel kills the rest of the namespace
            _drain(woken)
        status = _reaped(child)
        if status is not None:
            os._exit(status)


def _drain(fd: int) -> None:
    try:
        while len(os.read(fd, 4096)) == 4096:
            pass
    except BlockingIOError:
        pass


def _become(program: list[str], *closed: int) -> None:
    """In the child: PROGRAM, with the signal dispositions Python changed back to the defaults."""
    try:
        for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
            signal.signal(number, signal.SIG_DFL)
        for fd in closed:
            os.close(fd)
        os.execvp(program[0], program)
    except (OSError, ValueError) as error:
        print(f"lifeline: cannot start {program[0]!r}: {error}", file=sys.stderr, flush=True)
    os._exit(127)


def _reaped(child: int) -> int | None:
    """Reap every process that has ended here (orphans come to the first process); `child`'s exit
    status once it has ended, else None."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return None
        if pid == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    main()
