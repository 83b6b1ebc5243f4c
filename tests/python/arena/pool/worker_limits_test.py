"""A pool worker's command that takes more of the host than the limits allow (arena.limits) is
stopped at once, and its stderr says why; an honest one runs to its end, confined."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from arena.limits.confine import OOM_FIRST
from arena.limits.limits import JOB_VARIABLE
from arena.pool.worker import Run, Worker, WorkerSettings, pid_namespace
from arena.reapi.cas import reapi_protos


def run_command(tmp_path: Path, script: str, cpus: frozenset[int] | None = None) -> tuple[int, bool, str, float]:
    settings = WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu", cpus=cpus)
    worker = Worker(settings)  # no call reaches its server
    command = reapi_protos()[0].Command(arguments=["sh", "-c", script])
    inputs = tmp_path / "root"
    inputs.mkdir(parents=True)
    begin = time.monotonic()
    try:
        code, timed_out = worker._run_command(Run("lease", None), command, inputs, tmp_path, limit=60)
    finally:
        worker.close()
    return code, timed_out, (tmp_path / "stderr").read_text(), time.monotonic() - begin


def test_a_command_over_the_disk_limit_is_stopped_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JOB_VARIABLE, "disk=16M")
    code, timed_out, stderr, took = run_command(tmp_path, "head -c 67108864 /dev/zero > fill; sleep 60")
    assert code == -9 and not timed_out and took < 30  # not its 60 s sleep, nor the 60 s timeout
    assert "stopped: the command wrote" in stderr and "over the limit of 16.0 MiB" in stderr


def test_an_honest_command_runs_confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JOB_VARIABLE, raising=False)
    code, timed_out, _, _ = run_command(tmp_path, "cat /proc/self/oom_score_adj > oom")  # in the input root
    assert (code, timed_out) == (0, False)
    assert int((tmp_path / "root" / "oom").read_text()) == OOM_FIRST


def test_the_commands_ipc_namespace_gets_a_shared_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0 or not pid_namespace():
        pytest.skip("only a root worker with namespaces of its own bounds them (limits/ipc.py)")
    monkeypatch.setenv(JOB_VARIABLE, "memory=1G")
    code, _, stderr, _ = run_command(tmp_path, "sleep 1; cat /proc/sys/kernel/shmall > shmall")  # once it is set
    assert code == 0, stderr
    assert int((tmp_path / "root" / "shmall").read_text()) == (1 << 30) // os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: one for the worker, one outside")
def test_a_workers_command_keeps_to_its_cpus_and_is_stopped_when_it_leaves(tmp_path: Path, groups: str) -> None:
    mine = frozenset({min(os.sched_getaffinity(0))})
    code, _, stderr, _ = run_command(tmp_path / "a", "grep Cpus_allowed_list /proc/self/status > cpus", cpus=mine)
    assert code == 0, stderr
    assert (tmp_path / "a" / "root" / "cpus").read_text().split()[-1] == str(min(mine))  # from its first instruction
    every = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    move = f"python3 -c 'import os, time; os.sched_setaffinity(0, {{{every}}}); print(min(os.sched_getaffinity(0)), max(os.sched_getaffinity(0)))"
    if groups == "auto":  # its cpuset: asked for every CPU, the kernel gives it the worker's
        code, _, stderr, _ = run_command(tmp_path / "b", move + "' > cpus", cpus=mine)
        assert code == 0, stderr
        assert (tmp_path / "b" / "root" / "cpus").read_text().split() == [str(min(mine))] * 2
        return
    code, timed_out, stderr, took = run_command(tmp_path / "b", move + "; time.sleep(60)'", cpus=mine)
    assert code == -9 and not timed_out and took < 30 and "outside its lane's" in stderr
