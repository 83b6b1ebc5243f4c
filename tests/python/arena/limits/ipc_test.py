"""A process tree's own IPC namespace gets its shared memory bounded from outside (root only)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from arena.limits.ipc import bound_ipc, holder

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("nsenter") is None,
    reason="joining another IPC namespace needs root, unshare and nsenter",
)


def test_the_namespace_below_a_process_is_found_and_bounded():
    process = subprocess.Popen(["unshare", "--ipc", "--", "sleep", "30"])
    try:
        assert holder(process.pid) is not None  # unshare became sleep in a namespace of its own
        assert bound_ipc(process.pid, 1 << 30)
        read = [
            "nsenter",
            f"--ipc=/proc/{process.pid}/ns/ipc",
            "--",
            "cat",
            "/proc/sys/kernel/shmall",
            "/proc/sys/kernel/msgmni",
        ]
        shmall, queues = subprocess.run(read, capture_output=True, text=True, check=True).stdout.split()
        assert int(shmall) == (1 << 30) // os.sysconf("SC_PAGE_SIZE") and int(queues) == 64
    finally:
        process.kill()
        process.wait()
    with open("/proc/sys/kernel/shmall") as file:  # this namespace's own limit is untouched
        assert int(file.read()) > (1 << 30) // os.sysconf("SC_PAGE_SIZE")


def test_a_tree_in_our_own_namespace_is_left_alone():
    process = subprocess.Popen(["sleep", "30"])
    try:
        assert holder(process.pid, wait_s=0.1) is None and not bound_ipc(process.pid, 1 << 30, wait_s=0.1)
    finally:
        process.kill()
        process.wait()
