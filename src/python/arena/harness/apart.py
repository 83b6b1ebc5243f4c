"""The candidate worker in user and PID namespaces of its own, where the kernel allows them.

The worker shares the judge's sandbox and user. In the judge's PID namespace a candidate could
name the judge and signal it (os.kill(os.getppid(), SIGKILL) ended a run without a result, and
the runner retried it and refunded the iteration). So, before torch or any candidate code, the
process the judge started makes a user namespace mapping its one uid and gid to themselves and a
PID namespace, and forks twice:

    waiter (the process the judge started, in the judge's namespaces): ends as the worker did
    └── init (pid 1 of the new PID namespace): reaps what the candidate orphans; its end kills
        │   every process left in the namespace
        └── worker (pid 2): serves the judge's requests; candidate code runs here

No process of the judge's namespace has a pid in the worker's, so the candidate can signal,
ptrace or open a pidfd of none of them (the kernel refuses a pidfd of /proc/<pid> outside the
caller's namespace), and a signal sent from inside to the init is dropped unless the init handles
it (it handles none). The judge, in the parent namespace, still sees, freezes and counts all of
them (candidate_worker.py).

A GPU runtime needs a /proc that matches its PID namespace (on the H200, CUDA's initialisation
failed with error 304, "OS call failed", in a new PID namespace under the judge's /proc). Where the
kernel lets it (outside bubblewrap: tried first, in a throwaway process), the init mounts the new
namespace's own /proc in a mount namespace of its own. Inside bubblewrap the kernel refuses that
mount (bubblewrap's read-only covers of /proc/sys and the like make a new procfs "too
revealing" to a user namespace below), so there the worker goes apart only on a machine without a
GPU device node, and stays in the judge's namespaces otherwise; then a judge it kills is the
candidate's verdict, charged, through the marks on the result descriptor, and a catchable signal
it sends is CHEAT_DETECTED (child.py). The start reply says which (`apart`).

Wherever it runs, the worker then keeps itself from the judge's processes (scope.py: Landlock's
scopes on Linux 6.12 and later, else a seccomp filter of the signals aimed at the judge); neither
needs a mount, so they hold inside bubblewrap on a GPU machine, where the namespaces above cannot be
had. The start reply says how (`scoped`).

Run as a script (`python apart.py COMMAND...`), it starts COMMAND the same way: a repository's own
bench command, which the judge runs after timing, is candidate code too. It imports nothing of
arena, so it needs no import path; scope.py, beside it, it loads from its own folder.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from pathlib import Path
from typing import NoReturn

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
GPU_NODES = ("nvidia*", "kfd")  # in /dev: a GPU runtime may run here
OWN_PROC, APART, SHARED = "apart, its own /proc", "apart", ""  # what separate() did


def die_with_parent() -> None:
    """Linux kills this process when its parent ends (a killed judge leaves no worker)."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def separate(close_fds: tuple[int, ...] = ()) -> str:
    """Go on as the worker, pid 2 in namespaces of its own: OWN_PROC (its namespace's own /proc
    mounted), APART (the judge's /proc: no GPU here), or SHARED ("": where the kernel refuses, or
    a GPU here needs an own /proc the kernel will not mount). The waiter and the init never
    return; they close `close_fds` (the worker's pipe ends: the judge must see them close when the
    worker ends)."""
    if not sys.platform.startswith("linux"):
        return SHARED
    own_proc = _trial()
    if not own_proc and gpu_nodes():
        return SHARED
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | (CLONE_NEWNS if own_proc else 0)) != 0:
        return SHARED
    _map(uid, gid)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the waiter and the init re-raise signals
    init = os.fork()
    if init:
        _close(close_fds)
        _end_as(init, reaper=False)
    die_with_parent()
    mounted = own_proc and _mount_proc()
    worker = os.fork()
    if worker:
        _close(close_fds)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Python's handler would make SIGINT deliverable
        _end_as(worker, reaper=True)
    die_with_parent()
    return OWN_PROC if mounted else APART


def gpu_nodes() -> list[str]:
    """The GPU device nodes in /dev (GPU_NODES): a GPU runtime may run here."""
    return sorted(str(node) for pattern in GPU_NODES for node in Path("/dev").glob(pattern))


def _map(uid: int, gid: int) -> None:
    """This user namespace's one uid and gid: ours, as outside."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            Path("/proc/self", name).write_text(text)
        except OSError:
            pass  # unmapped, the ids still act as themselves on files; the PID namespace is what counts


def _mount_proc() -> bool:
    """The calling init's own /proc, in its mount namespace (private: nothing propagates out)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return False
    return libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0


def _trial() -> bool:
    """Whether the kernel lets a process here make user, PID and mount namespaces and mount the
    new PID namespace's /proc, tried in a throwaway process (nothing of this one changes)."""
    trial = os.fork()
    if trial == 0:
        code = 1
        try:
            uid, gid = os.geteuid(), os.getegid()
            if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) == 0:
                _map(uid, gid)
                init = os.fork()
                if init == 0:
                    os._exit(0 if _mount_proc() else 1)
                code = os.waitstatus_to_exitcode(os.waitpid(init, 0)[1])
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(trial, 0)[1]) == 0


def _close(fds: tuple[int, ...]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _end_as(child: int, reaper: bool) -> NoReturn:
    """Wait for `child` (reaping any other process meanwhile when `reaper`) and end as it did: its
    exit code, or its signal (an init cannot die of a signal it sends itself, so it exits with
    128 + the signal, which the waiter turns back into the signal)."""
    while True:
        try:
            pid, status = os.waitpid(-1 if reaper else child, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            break
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
    else:
        code = os.waitstatus_to_exitcode(status)
        number = code - 128 if not reaper and 128 < code < 128 + 65 else 0
        if not number:
            os._exit(code)
    if not reaper:
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL and SIGSTOP have no handler to reset
        os.kill(os.getpid(), number)
    os._exit(128 + number)


def main(argv: list[str]) -> NoReturn:
    """COMMAND apart: it becomes the process at pid 2 (or stays here, where the kernel refuses),
    scoped (scope) where the kernel can."""
    die_with_parent()
    separate()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # -I leaves the script's folder off
    from scope import scope  # pants: no-infer-dep (arena.harness.scope, loaded by path: -I)

    scope()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
