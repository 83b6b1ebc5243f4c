# Attack: stop the judge for free. A candidate that killed its parent (the judge) used to end the
# run without a result: a fault of the machine, run again three times and refunded. The candidate
# signals its parent, or every process it can see, with SIGKILL, then answers correctly.
# Expected: the worker lives in user and PID namespaces of its own (apart.py): no process of the
# judge's has a pid it can name, the kills fail, the judge survives and the candidate is judged
# normally (PASSED; killing every pid it sees may hit its own threads: RUNTIME_ERROR, from the
# judge), in the sandbox and without it. Where it cannot go apart (a GPU inside bubblewrap) its
# scope refuses the kills (scope.py: Landlock from Linux 6.12, else a seccomp filter); where it has
# neither, the judge dies and the verdict is still the candidate's: RUNTIME_ERROR, charged. And a judge that dies while candidate code runs
# (killed from outside here, as the kernel's OOM killer would) is the candidate's verdict:
# RUNTIME_ERROR, charged, never a fault to retry and refund; before any candidate code it is one.

import os
import platform
import signal
import textwrap
from pathlib import Path

import pytest

from arena.harness.apart import gpu_nodes
from arena.harness.job import CANDIDATE_MARK
from arena.harness.scope import landlock_abi
from arena_testing.harness_tasks import TRITON_ADD
from arena_testing.processes import judges
from arena_testing.waiting import wait_until

# On a machine with a GPU, inside bubblewrap, the worker stays in the judge's namespaces (apart.py);
# wherever it runs it is kept from the judge's processes (scope.py: Landlock's scopes, or a
# seccomp filter of signals on the machines it knows).
GPU_HERE = bool(gpu_nodes())
SCOPED_HERE = landlock_abi()[0] >= 6 or platform.machine() in ("x86_64", "aarch64")

KILL_THE_PARENT = """
import os


def add(x, y):
    try:
        getattr(os, "ki" + "ll")(getattr(os, "getp" + "pid")(), 9)
    except OSError:
        pass
    return _add(x, y)
"""

KILL_EVERYTHING = """
import os


def add(x, y):
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                getattr(os, "ki" + "ll")(int(entry), 9)
            except OSError:
                pass
    return _add(x, y)
"""

# The kernel, at its first call, runs a marked process and waits for it: the test kills the judge.
WAIT_IN_THE_KERNEL = """
import os


def add(x, y):
    getattr(os, "sy" + "stem")("sleep 600; : {token}")
    return _add(x, y)
"""


def _candidate(kernel: str) -> str:
    return TRITON_ADD.replace("\ndef add(x, y):", "\ndef _add(x, y):") + textwrap.dedent(kernel)


@pytest.mark.parametrize("kernel", [KILL_THE_PARENT, KILL_EVERYTHING], ids=["parent", "everything"])
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_the_kills_fail_and_the_candidate_is_judged_normally(run_candidate, monkeypatch, kernel, sandboxed):
    from arena.environment.probe import sandbox_tool
    from arena.harness import launch

    if sandboxed and not sandbox_tool():
        pytest.skip("no OS sandbox on this machine (bubblewrap)")
    if not sandboxed:
        monkeypatch.setattr(launch, "sandbox_tool", lambda: "")
    result = run_candidate(_candidate(kernel))
    assert result.harness_fault == "", result.errors  # never a fault: nothing run again, nothing refunded
    if not result.stages:  # the worker shared the judge's namespaces (a GPU inside bubblewrap: apart.py)
        assert not SCOPED_HERE, result.errors  # its scope would have refused the kill
        assert result.status == "RUNTIME_ERROR", result.errors
        assert "while the candidate's code was running" in result.errors[0], result.errors
        return
    # The judge survived: its signed verdict came back (its stages with it).
    setup = next(stage for stage in result.stages if stage.name == "setup")
    assert "in namespaces of its own" in setup.log or GPU_HERE, setup.log
    assert ("worker not scoped" not in setup.log) == SCOPED_HERE, setup.log
    if kernel is KILL_THE_PARENT:  # its parent is the worker's init, which ignores the signal
        assert result.status == "PASSED", result.errors
    else:  # a pid it saw may be one of its own threads there (kill() takes a thread's id): a suicide
        assert result.status in ("PASSED", "RUNTIME_ERROR"), result.errors


def _alive_with(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_judge_that_dies_while_the_candidates_code_runs_is_the_candidates_verdict(run_candidate, tmp_path):
    import threading

    token = f"arena-judge-killed-{os.getpid()}-{id(tmp_path)}"

    def kill_the_judge() -> None:
        wait_until(lambda: _alive_with(token), "the candidate's code to run")
        for judge in judges(os.getpid()):
            os.kill(judge, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_judge)
    killer.start()
    try:
        result = run_candidate(_candidate(WAIT_IN_THE_KERNEL.replace("{token}", token)), timeout_s=300)
    finally:
        killer.join()
    assert result.status == "RUNTIME_ERROR", result.errors
    assert result.harness_fault == ""  # the candidate's: charged, cached, not run again
    assert "while the candidate's code was running" in result.errors[0], result.errors
    assert _alive_with(token) == []


def test_a_judge_that_dies_before_any_candidate_code_is_a_fault(tmp_path):
    from arena.harness.job import FOLDERS, new_job
    from arena.harness.launch import Child
    from arena.harness.settings import HarnessSettings
    from arena_testing.harness_tasks import build_task

    task = build_task(tmp_path)
    child = Child()
    try:
        judge = wait_until(lambda: judges(child.process.pid), "the judge")[0]
        os.kill(judge, signal.SIGKILL)
        dirs = {name: str(child.work / name) for name in FOLDERS}
        job = new_job(task, HarnessSettings(backend="cpu"), dirs, b"k" * 32, child.result_fd_in_child)
        result = child.run(job, 120)
    finally:
        child.close()
    assert result.status == "RUNTIME_ERROR" and result.harness_fault, result.errors
    assert CANDIDATE_MARK.strip().decode() not in result.errors[0]


# An old kernel, planted for this process and all it starts: no Landlock (ENOSYS) and no new
# namespaces (unshare: EPERM), so the worker shares the judge's namespaces and can only fall back
# to scope.py's seccomp filter. Then the candidate that kills its parent is judged as before.
OLD_KERNEL = """
import ctypes, json, struct, sys
from pathlib import Path

program = b"".join(struct.pack("<HBBI", *i) for i in (
    (0x20, 0, 0, 0),                    # the syscall's number
    (0x35, 0, 2, 444), (0x35, 1, 0, 447),  # 444-446: Landlock
    (0x06, 0, 0, 0x00050000 | 38),      # ENOSYS
    (0x15, 0, 1, 272),                  # unshare
    (0x06, 0, 0, 0x00050000 | 1),       # EPERM
    (0x06, 0, 0, 0x7FFF0000),
))


class Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(Filter(len(program) // 8, program)), 0, 0) == 0

from arena.candidate.candidate import Candidate
from arena.harness import launch
from arena.harness.launch import run_harness
from arena.harness.settings import HarnessSettings
from arena_testing.harness_tasks import build_task

launch.sandbox_tool = lambda: ""  # bubblewrap may be set-uid, which no_new_privs refuses
root = Path(sys.argv[1])
task = build_task(root)
candidate = Candidate(task.address, {task.entry.file: sys.stdin.read().encode()})
result = run_harness(task, candidate, root, HarnessSettings(backend="cpu", timeout_s=120))
setup = next((stage.log for stage in result.stages if stage.name == "setup"), "")
print(json.dumps({"status": result.status, "errors": result.errors, "setup": setup}))
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the planted filter uses x86_64's numbers")
def test_on_a_kernel_without_scopes_or_namespaces_the_filter_refuses_the_kill(tmp_path):
    import json
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, "-c", OLD_KERNEL, str(tmp_path)],
        input=_candidate(KILL_THE_PARENT),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "worker in the judge's namespaces" in result["setup"], result["setup"]
    assert "a seccomp filter" in result["setup"], result["setup"]
    assert result["status"] == "PASSED", result["errors"]
