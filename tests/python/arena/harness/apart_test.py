"""A command apart (apart.py, run as a script the way the repository bench is): pid 2 of a PID
namespace of its own, whose init ends everything it leaves; its parent unnamable; its end passed on."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.harness import apart
from arena.harness.scope import landlock_abi

SCRIPT = str(Path(apart.__file__).resolve())


def _apart(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", SCRIPT, "/bin/sh", "-c", script], capture_output=True, text=True)


def test_the_command_runs_as_pid_2_and_cannot_reach_its_parents():
    done = _apart('echo "$$ $PPID"; kill -9 "$PPID"; kill -9 1; echo alive')
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "1", "alive"]  # the init ignores what it does not handle


def test_outside_a_sandbox_it_sees_only_its_own_processes():
    # Its own /proc, mounted by its init: nothing of this test's namespace is listed there.
    done = _apart("for p in /proc/[0-9]*; do echo ${p#/proc/}; done")
    assert done.returncode == 0, done.stderr
    assert {int(pid) for pid in done.stdout.split()} <= {1, 2, 3, 4}, done.stdout


def test_its_end_is_passed_on():
    assert _apart("exit 3").returncode == 3
    assert _apart("kill -SEGV $$").returncode == -11
    assert _apart("kill -9 $$").returncode == -9


def test_what_it_leaves_running_ends_with_it(tmp_path):
    token = f"arena-apart-{os.getpid()}-{id(tmp_path)}"
    done = _apart(f"setsid sleep 300 {token} & echo started")
    assert done.returncode == 0 and done.stdout.strip() == "started"
    left = [p for p in os.listdir("/proc") if p.isdigit() and token.encode() in _cmdline(p)]
    assert left == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_where_the_kernel_refuses_the_command_stays_where_it_is(monkeypatch):
    class Refusing:
        def unshare(self, flags: int) -> int:
            return -1

    monkeypatch.setattr(apart.ctypes, "CDLL", lambda *args, **kwargs: Refusing())
    assert apart.separate() == apart.SHARED  # this test process goes on, nothing of it changed


def test_gpu_nodes_are_the_nodes_found(monkeypatch):
    # Not a generator's truth (every generator is true): a machine without one goes apart.
    monkeypatch.setattr(apart, "GPU_NODES", ("no-such-gpu-node*",))
    assert apart.gpu_nodes() == []
    monkeypatch.setattr(apart, "GPU_NODES", ("nul?", "no-such-gpu-node*"))
    assert apart.gpu_nodes() == ["/dev/null"]


def test_with_a_gpu_and_no_own_proc_the_worker_stays(monkeypatch):
    monkeypatch.setattr(apart, "_trial", lambda: False)
    monkeypatch.setattr(apart, "gpu_nodes", lambda: ["/dev/nvidia0"])
    assert apart.separate() == apart.SHARED  # returned before any unshare: this process unchanged


@pytest.mark.parametrize("name", ["SIGTERM", "SIGUSR1", "SIGTSTP"])
def test_a_signal_to_the_judge_once_candidate_code_runs_is_a_cheat(name):
    """The judge's watch (child.py): where a worker shares its PID namespace (the kernel refused
    apart's), a catchable signal it sends the judge becomes CHEAT_DETECTED, not a lost run."""
    import signal

    from arena.harness.child import ALARMS, Watch
    from arena.harness.job import CANDIDATE_MARK
    from arena.harness.verdict import Verdict

    saved = {alarm: signal.getsignal(getattr(signal, alarm)) for alarm in ALARMS}
    read, write = os.pipe()
    try:
        watch = Watch(write)
        watch.candidate_alive()
        assert os.read(read, 64) == CANDIDATE_MARK
        with pytest.raises(Verdict, match=name) as raised:
            os.kill(os.getpid(), getattr(signal, name))  # handled before os.kill returns to us
        assert getattr(raised.value, "status", "") == "CHEAT_DETECTED"
        os.kill(os.getpid(), signal.SIGUSR2)  # later ones are only noted
        assert watch.seen == [name, "SIGUSR2"]
    finally:
        for alarm, handler in saved.items():
            signal.signal(getattr(signal, alarm), handler)
        os.close(read)
        os.close(write)


def test_the_command_apart_is_scoped_too(tmp_path):
    if landlock_abi()[0] < 6:
        pytest.skip("no Landlock scopes here: the abstract socket is refused by them alone")
    # Abstract sockets belong to the network namespace, which apart shares: only the scope refuses.
    name = f"arena-apart-scope-{os.getpid()}-{id(tmp_path)}"
    outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    outside.bind(b"\0" + name.encode())
    outside.listen(1)
    try:
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect(b'\\0{name}')"
        done = _apart(f'{sys.executable} -I -c "{connect}"')
    finally:
        outside.close()
    assert done.returncode == 1 and "PermissionError" in done.stderr, done.stderr
