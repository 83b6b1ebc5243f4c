"""A candidate that takes the host's resources is stopped by its parent's watch (arena.limits),
or by the kernel at its control group's limits where the host allows groups, charged as the
candidate's RUNTIME_ERROR, within a few seconds: each candidate below would otherwise hold on
until its 40 s deadline (TIMEOUT), its /tmp in memory no process is charged for.

Names are built at run time where the static check would stop them first: these test the watch
and the kernel, not the static check."""

from __future__ import annotations

import os
import time

import pytest

from arena.limits.limits import JOB_VARIABLE
from arena_testing.harness_tasks import TRITON_ADD

WAIT = "\n    import time\n    time.sleep(60)\n    return x + y\n"
OPEN = "import os\nopened = getattr(getattr(os, 'sy' + 's').modules['builti' + 'ns'], 'op' + 'en')\n\n"
TAKERS = {
    "processes": (
        "processes=40",
        "import os\nimport time\n\ndef add(x, y):\n    for _ in range(100):\n        if getattr(os, 'fo' + 'rk')() == 0:\n"
        "            time.sleep(60)\n            getattr(os, '_ex' + 'it')(0)" + WAIT,
        ("processes, over the limit of 40",),
    ),
    "threads": (
        "threads=150",
        "import os\nfrom time import sleep\nthreading = getattr(os, 'sy' + 's').modules['thread' + 'ing']\n\n"
        "def add(x, y):\n    for _ in range(300):\n"
        "        threading.Thread(target=sleep, args=(60,), daemon=True).start()" + WAIT,
        # the kernel's backstop (RLIMIT_NPROC, the group's pids.max: the thread limit) may refuse a thread first
        ("threads, over the limit of 150", "can't start new thread", "over its limit of 150 tasks"),
    ),
    "a file in /tmp": (
        "disk=64M",
        OPEN + "def add(x, y):\n    with opened('/tmp/fill', 'wb') as file:\n        for _ in range(200):\n"
        "            file.write(b'x' * (1 << 20))" + WAIT,
        ("to disk, over the limit of 64.0 MiB",),
    ),
    "a deleted file held open": (
        "disk=64M",
        OPEN
        + "def add(x, y):\n    file = opened('/dev/shm/gone', 'wb')\n    getattr(os, 'un' + 'link')('/dev/shm/gone')\n"
        "    for _ in range(200):\n        file.write(b'x' * (1 << 20))\n    file.flush()" + WAIT,
        ("to disk, over the limit of 64.0 MiB",),
    ),
    # System V shared memory made, filled and detached: no process holds it, so the watch cannot
    # see it; under a root runner the namespace's own limit refuses it (limits/ipc.py).
    "detached shared memory": (
        "memory=512M",
        "import os\nctypes = getattr(os, 'sy' + 's').modules['ctypes']\nlibc = ctypes.CDLL(None)\n"
        "libc.shmat.restype = ctypes.c_void_p\n\n"
        "def add(x, y):\n    for _ in range(32):\n        segment = libc.shmget(0, 64 << 20, 0o1600)\n"
        "        if segment < 0:\n            raise MemoryError('shared memory refused')\n"
        "        address = libc.shmat(segment, None, 0)\n        ctypes.memset(address, 1, 64 << 20)\n"
        "        libc.shmdt(ctypes.c_void_p(address))" + WAIT,
        # 2 GiB in 64 MiB pieces, each held only while it is filled; a control group is charged for them
        ("shared memory refused", "killed by the kernel at its memory limit of 512.0 MiB"),
    ),
    "memory": (
        "memory=512M",
        "held = []\n\ndef add(x, y):\n    held.append(b'x' * (1 << 30))" + WAIT,
        # or the kernel, at its group's limit, first
        ("of memory, over the limit of 512.0 MiB", "was killed by the kernel at its memory limit of 512.0 MiB"),
    ),
    "files": (
        "files=2000",
        OPEN + "def add(x, y):\n    for n in range(5000):\n        opened(f'empty{n}', 'wb').close()" + WAIT,
        ("made more than 2000 files",),
    ),
}


@pytest.mark.parametrize("name", TAKERS)
def test_a_candidate_over_a_limit_is_stopped_and_charged(run_candidate, monkeypatch, name):
    if name == "detached shared memory" and os.geteuid() != 0:
        pytest.skip("only a root runner can bound the sandbox's IPC namespace (limits/ipc.py)")
    setting, source, said = TAKERS[name]
    monkeypatch.setenv(JOB_VARIABLE, setting)
    begin = time.monotonic()
    result = run_candidate(source, timeout_s=40)
    assert result.status == "RUNTIME_ERROR", result.errors
    message = result.errors[0]
    assert any(text in message for text in said), result.errors
    assert "was stopped" not in message or "while the candidate's code was running" in message
    assert not result.harness_fault  # charged: not retried, not refunded
    assert time.monotonic() - begin < 30  # stopped by the watch, not the deadline


def test_the_default_limits_leave_an_honest_candidate_alone(run_candidate, monkeypatch):
    monkeypatch.delenv(JOB_VARIABLE, raising=False)
    assert run_candidate(TRITON_ADD).status == "PASSED"


CPUS = "import os\nshow = getattr(os, 'sched_get' + 'affinity')\nmove = getattr(os, 'sched_set' + 'affinity')\n\n"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: one for the lane, one outside it")
def test_a_lanes_child_is_kept_to_its_cpus_and_one_that_leaves_them_is_stopped(run_candidate, groups):
    lane = frozenset({min(os.sched_getaffinity(0))})
    shown = run_candidate(CPUS + "def add(x, y):\n    raise ValueError(f'cpus {sorted(show(0))}')\n", cpus=lane)
    assert f"cpus {sorted(lane)}" in shown.errors[0]  # pinned before the job: the candidate's thread inherits it
    begin = time.monotonic()
    every = "set(range(getattr(os, 'cpu_' + 'count')()))"
    if groups == "auto":  # its cpuset: asked for every CPU, the kernel gives it its lane's
        kept = run_candidate(
            CPUS + f"def add(x, y):\n    move(0, {every})\n    raise ValueError(f'cpus {{sorted(show(0))}}')\n",
            cpus=lane,
        )
        assert f"cpus {sorted(lane)}" in kept.errors[0], kept.errors
        return
    moved = run_candidate(CPUS + f"def add(x, y):\n    move(0, {every})" + WAIT, cpus=lane, timeout_s=40)
    assert moved.status == "RUNTIME_ERROR" and "outside its lane's" in moved.errors[0], moved.errors
    assert time.monotonic() - begin < 30


def test_a_memory_spike_between_two_readings_is_stopped_by_the_kernel(run_candidate, monkeypatch, groups):
    if groups == "off":
        pytest.skip("only a control group's limit sees memory taken and let go between two readings")
    monkeypatch.setenv(JOB_VARIABLE, "memory=1G")
    spike = "def add(x, y):\n    block = bytearray(3 << 30)\n    del block\n    return x + y\n"
    result = run_candidate(spike, timeout_s=40)
    assert result.status == "RUNTIME_ERROR", result.errors
    assert "was killed by the kernel at its memory limit of 1.0 GiB" in result.errors[0], result.errors
    assert not result.harness_fault


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: one for the lane")
def test_a_lanes_waiting_child_starts_on_its_cpus():
    from arena.harness.launch import Standby
    from arena.limits.cpus import strays
    from arena.limits.usage import process_tree

    lane = frozenset({min(os.sched_getaffinity(0))})
    standby = Standby()
    try:
        standby.warm(lane)
        child = standby._next
        assert child is not None
        time.sleep(2)  # its interpreter imports torch meanwhile, in threads of its own
        assert strays(process_tree(child.process.pid), lane) == frozenset()  # its import ran on the lane alone
    finally:
        standby.close()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: one for the lane")
def test_a_child_started_for_no_lane_is_pinned_before_its_job(tmp_path):
    from arena.candidate.candidate import Candidate
    from arena.harness.launch import Standby, run_harness
    from arena.harness.settings import HarnessSettings
    from arena_testing.harness_tasks import build_task

    lane = frozenset({min(os.sched_getaffinity(0))})
    task = build_task(tmp_path)
    source = CPUS + "def add(x, y):\n    raise ValueError(f'cpus {sorted(show(0))}')\n"
    standby = Standby(again=False)
    standby.warm()  # on every CPU, as `arena evaluate` starts its child before it knows a lane
    try:
        shown = run_harness(
            task, Candidate(task.address, {task.entry.file: source.encode()}), tmp_path,
            HarnessSettings(backend="cpu", timeout_s=120), standby=standby, cpus=lane,
        )  # fmt: skip
    finally:
        standby.close()
    assert f"cpus {sorted(lane)}" in shown.errors[0], shown.errors


def test_dev_shm_is_a_tmpfs_of_the_childs_own_the_candidate_may_write_within_its_bound(run_candidate):
    """CUDA's interprocess events need a tmpfs at /dev/shm (a folder on disk there failed every GPU
    job: shared_gpu.py); it is the child's own, writable by its user, and at most SHM_BYTES."""
    from arena.environment.probe import sandbox_tool
    from arena.harness.sandbox import SHM_BYTES, _has_size

    if not sandbox_tool():
        pytest.skip("no sandbox here: /dev/shm is the host's")
    probe = OPEN + (
        "def add(x, y):\n    with opened('/dev/shm/mine', 'wb') as file:\n        file.write(b'x')\n"
        "    shown = getattr(os, 'stat' + 'vfs')('/dev/shm')\n"
        "    kind = [line.split()[2] for line in opened('/proc/self/mounts') if line.split()[1] == '/dev/shm']\n"
        "    raise ValueError(f'shm {kind[-1]} {shown.f_blocks * shown.f_frsize}')\n"
    )
    result = run_candidate(probe)
    size = SHM_BYTES if _has_size() else None
    assert "shm tmpfs" in result.errors[0], result.errors
    if size is not None:
        assert f"shm tmpfs {size}" in result.errors[0], result.errors
