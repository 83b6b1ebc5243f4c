"""The System V IPC of a sandbox's own IPC namespace, bounded from outside.

A shared memory segment that a process makes, fills and detaches belongs to no process: no
reading of memory sees it and the OOM killer cannot free it, until the namespace ends with the
sandbox. Its limits are the namespace's own sysctls (kernel.shmall and the like, unbounded by
default), which the sandbox cannot write (bubblewrap shows /proc/sys read-only) but a root parent
can, from its own /proc/sys, in a process that joined that namespace (nsenter). Message queues
likewise. A parent that is not root may not join it: there the gap stays (docs/harness.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from arena.limits.usage import process_tree

QUEUES = 64  # kernel.msgmni: System V message queues (16 KiB each by default)
WAIT_S = 5.0  # for the sandbox to make its namespace
POLL_S = 0.01


def holder(root: int, wait_s: float = WAIT_S) -> int | None:
    """A process below `root` in an IPC namespace other than ours (the sandbox's), once there is one."""
    ours = os.readlink("/proc/self/ns/ipc")
    deadline = time.monotonic() + wait_s
    while True:
        for pid in process_tree(root):
            try:
                if os.readlink(f"/proc/{pid}/ns/ipc") != ours:
                    return pid
            except OSError:
                continue
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def bound_ipc(root: int, memory: int, wait_s: float = WAIT_S) -> bool:
    """Shared memory in the sandbox's IPC namespace at most `memory` bytes in all, and few message
    queues. False where it cannot be done here (not root, no nsenter, no namespace of its own)."""
    if os.geteuid() != 0 or shutil.which("nsenter") is None:
        return False
    pid = holder(root, wait_s)
    if pid is None:
        return False
    pages = max(1, memory // os.sysconf("SC_PAGE_SIZE"))
    settings = {"shmall": pages, "shmmax": memory, "msgmni": QUEUES}
    script = " && ".join(f"echo {value} > /proc/sys/kernel/{name}" for name, value in settings.items())
    done = subprocess.run(
        ["nsenter", f"--ipc=/proc/{pid}/ns/ipc", "--", "/bin/sh", "-c", script], capture_output=True, timeout=30
    )
    return done.returncode == 0
