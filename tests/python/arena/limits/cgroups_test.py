"""A sandbox's control group: found on this host's hierarchies (v1 or v2), made with its limits,
joined by confine.py before anything runs, and what the kernel then does at each limit.

The kernel's tests run where this host lets the runner make groups (root, a writable hierarchy);
the layouts and the v2 protocol are checked on folders that stand for /proc and /sys/fs/cgroup."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.limits.cgroups import ARENA, VARIABLE, Group, Hierarchy, find, found
from arena.limits.limits import Limits, Watch, confined, group_for

V1_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V2_MOUNTS = "25 1 0:22 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def _proc(tmp_path: Path, mountinfo: str, cgroup: str) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir(parents=True)
    (proc / "mountinfo").write_text(mountinfo)
    (proc / "cgroup").write_text(cgroup)
    return proc


def _v2_group(folder: Path, cpus: str = "0-7") -> Path:
    """A v2 group as the kernel shows one, its group "arena" below it already made."""
    for group in (folder, folder / ARENA):
        group.mkdir(parents=True, exist_ok=True)
        (group / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (group / "cgroup.subtree_control").write_text("\n")
        (group / "cpuset.cpus.effective").write_text(cpus + "\n")
    return folder


def test_off_uses_none_and_a_host_without_the_controllers_says_so(tmp_path):
    assert find("off").hierarchy is None and "off" in find("off").reason
    bare = _proc(tmp_path, "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", "0::/\n")
    seen = find("", proc=bare)
    assert seen.hierarchy is None and "memory, pids and cpuset" in seen.reason
    # A systemd service without Delegate=yes: its group is offered memory and pids, not cpuset.
    service = tmp_path / "cgroup" / "system.slice" / "arena.service"
    service.mkdir(parents=True)
    (service / "cgroup.controllers").write_text("cpu io memory pids\n")
    plain = _proc(tmp_path / "plain", V2_MOUNTS.format(root=tmp_path / "cgroup"), "0::/system.slice/arena.service\n")
    seen = find("auto", proc=plain)
    assert seen.hierarchy is None and seen.reason == (
        f"the runner's group {service}: controllers cpuset are not offered there "
        "(delegate them to the runner, or set ARENA_CGROUPS to a group that has them)"
    )


def test_v2_below_the_runners_own_group_with_its_controllers_handed_down(tmp_path):
    root = tmp_path / "cgroup"
    _v2_group(root / "system.slice" / "arena-runner.service")
    proc = _proc(tmp_path, V2_MOUNTS.format(root=root), "0::/system.slice/arena-runner.service\n")
    hierarchy = find("auto", proc=proc).hierarchy
    assert hierarchy is not None and hierarchy.version == 2
    parent = root / "system.slice" / "arena-runner.service" / ARENA
    assert set(hierarchy.parents.values()) == {parent}
    for group in (parent.parent, parent):  # written as the kernel takes it: one write, every controller
        assert (group / "cgroup.subtree_control").read_text() == "+memory +pids +cpuset"


def test_v2_group_is_made_with_every_limit(tmp_path):
    parent = _v2_group(tmp_path / "delegated") / ARENA
    group = Group(Hierarchy(2, {c: parent for c in ("memory", "pids", "cpuset")}), 64 << 20, 300, frozenset({2, 3}))
    (folder,) = set(group.folders.values())
    namespace = os.stat("/proc/self/ns/pid").st_ino
    assert folder.parent == parent and folder.name.startswith(f"arena-{namespace}-{os.getpid()}-")
    assert (folder / "memory.max").read_text() == str(64 << 20)
    assert (folder / "memory.oom.group").read_text() == "1"  # killed whole
    assert (folder / "pids.max").read_text() == "300"
    assert (folder / "cpuset.cpus").read_text() == "2-3"
    assert group.joins == [folder / "cgroup.procs"]
    group.keep_to(None)
    assert (folder / "cpuset.cpus").read_text() == "0-7"  # the parent's, all of them
    assert group.breach() == ""
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert group.breach() == "was killed by the kernel at its memory limit of 64.0 MiB"
    (folder / "memory.events").write_text("oom_kill 0\n")
    (folder / "pids.events").write_text("max 3\n")
    assert group.breach() == "was refused a process or thread over its limit of 300 tasks"


def test_a_given_folder_that_is_no_v2_group_is_refused(tmp_path):
    with pytest.raises(ArenaError, match="not a cgroup v2 group"):
        find(str(tmp_path))
    (tmp_path / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(ArenaError, match="cpuset, memory, pids are not offered"):
        find(str(tmp_path))


def test_v1_layout_is_found_from_mountinfo_and_the_runners_groups(tmp_path):
    from arena.limits.cgroups import _mounts, _own_groups

    proc = _proc(tmp_path, V1_MOUNTS, "4:memory:/process_api/abc\n3:cpuset:/\n8:pids:/\n0::/\n")
    mounts = _mounts(proc / "mountinfo")
    assert mounts == {
        "cpuset": Path("/sys/fs/cgroup/cpuset"),
        "memory": Path("/sys/fs/cgroup/memory"),
        "pids": Path("/sys/fs/cgroup/pids"),
        "": Path("/sys/fs/cgroup/unified"),
    }
    assert _own_groups(proc / "cgroup") == {"memory": "/process_api/abc", "cpuset": "/", "pids": "/", "": "/"}


# What the kernel does: on this host, where the runner may make groups (as the runner finds them:
# ARENA_CGROUPS names a delegated v2 group where the runner's own offers too few controllers).
FOUND = found()
HERE = FOUND.hierarchy
kernel = pytest.mark.skipif(HERE is None, reason=f"no control groups here: {FOUND.reason}")
SMALL = Limits(processes=100, threads=40, memory=64 << 20, disk=1 << 30, files=1000)


def _confined_run(code: str, group: Group, cpus: frozenset[int] | None = None) -> subprocess.CompletedProcess[str]:
    argv = confined([sys.executable, "-c", code], SMALL, cpus, group)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@kernel
def test_the_kernel_kills_a_sandbox_at_its_memory_limit_between_two_readings():
    group = group_for(SMALL)
    assert group is not None
    try:
        # 256 MiB taken and let go at once: no reading every half second need see it.
        done = _confined_run("block = bytearray(256 << 20)\ndel block\nprint('survived')", group)
        assert done.returncode == -9 and "survived" not in done.stdout
        assert Watch(0, [], SMALL, group=group).settle() == ("was killed by the kernel at its memory limit of 64.0 MiB")
    finally:
        group.close()
    assert not any(folder.exists() for folder in group.folders.values())


@kernel
def test_the_kernel_refuses_tasks_past_the_limit_whoever_runs_them():
    group = group_for(SMALL)
    assert group is not None
    code = (
        "import threading, time\nstarted = 0\ntry:\n    for _ in range(100):\n"
        "        threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n        started += 1\n"
        "except RuntimeError:\n    pass\nprint(started)"
    )
    try:
        done = _confined_run(code, group)
        assert done.returncode == 0 and int(done.stdout) < 40  # root included: RLIMIT_NPROC spares it
        assert "over its limit of 40 tasks" in group.breach()
    finally:
        group.close()


@kernel
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: one for the lane, one outside it")
def test_a_lanes_threads_cannot_leave_its_cpus():
    lane = frozenset({min(os.sched_getaffinity(0))})
    group = group_for(SMALL, lane)
    assert group is not None
    code = (
        "import os\nos.sched_setaffinity(0, range(os.cpu_count()))\nprint(sorted(os.sched_getaffinity(0)))\n"
        f"try:\n    os.sched_setaffinity(0, set(range(os.cpu_count())) - {set(lane)})\n"
        "except OSError as error:\n    print(error.errno)\n"
    )
    try:
        done = _confined_run(code, group, lane)
        # Asked for every CPU, it gets its lane's; asked for others only, it is refused (EINVAL).
        assert done.stdout.split() == [str(sorted(lane)).replace(" ", ""), "22"], done.stderr
    finally:
        group.close()


@kernel
def test_closing_a_group_kills_what_escaped_its_process_group_and_removes_it():
    group = group_for(SMALL)
    assert group is not None
    # A daemon: its own session, its parent gone, so no process group or tree leads to it.
    code = (
        "import os, subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True,\n"
        "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(child.pid)"
    )
    done = _confined_run(code, group)
    daemon = int(done.stdout)
    assert Path(f"/proc/{daemon}").exists()
    group.close()
    deadline = time.monotonic() + 5
    while Path(f"/proc/{daemon}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{daemon}").exists()
    assert not any(folder.exists() for folder in group.folders.values())


@kernel
def test_a_dead_runners_groups_are_removed_by_the_next():
    assert HERE is not None
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    namespace = os.stat("/proc/self/ns/pid").st_ino
    parents = set(HERE.parents.values())
    left = [parent / f"arena-{namespace}-{int(dead.stdout)}-0" for parent in parents]
    elsewhere = [parent / f"arena-1-{int(dead.stdout)}-0" for parent in parents]  # another PID namespace's
    for folder in left + elsewhere:
        folder.mkdir()
    try:
        find(os.environ.get(VARIABLE, ""))  # the sweep of the hierarchy found() gave
        assert not any(folder.exists() for folder in left)
        assert all(folder.exists() for folder in elsewhere)  # its pids are not ours to judge
    finally:
        for folder in elsewhere:
            folder.rmdir()


def test_v2_a_runner_alone_in_its_group_moves_itself_into_a_leaf_to_hand_controllers_down(tmp_path, monkeypatch):
    from arena.limits import cgroups

    group = _v2_group(tmp_path / "service")
    (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
    (group / "runner").mkdir()
    refused: list[Path] = []

    def enable(folder: Path) -> None:  # as the kernel: no controllers handed down from a group with processes
        if folder == group and not refused:
            refused.append(folder)
            raise OSError(16, "Device or resource busy")  # EBUSY
        (folder / "cgroup.subtree_control").write_text("+memory +pids +cpuset")

    monkeypatch.setattr(cgroups, "_enable", enable)
    hierarchy = cgroups._v2(group, given=True)
    assert hierarchy is not None and set(hierarchy.parents.values()) == {group / ARENA}
    assert (group / "runner" / "cgroup.procs").read_text() == str(os.getpid())  # moved, then handed down
    (group / "cgroup.procs").write_text(f"{os.getpid()}\n1\n")  # another process there too: not ours to move
    refused.clear()
    with pytest.raises(OSError, match="busy"):
        cgroups._v2(group, given=True)
