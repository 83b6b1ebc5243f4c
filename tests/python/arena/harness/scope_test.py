"""What a scoped process can still reach (scope.py): planted in throwaway processes, since neither
a Landlock domain nor a seccomp filter can be left."""

import os
import platform
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from arena.harness import scope

HERE = str(Path(scope.__file__).resolve().parent)

# A parent that records which signals it gets (one number a try: Python runs a handler once for
# however many of one number arrived before it ran, so three of one number read as one or two on
# a loaded machine) and listens on an abstract socket; its child applies
# `{how}` and then tries the parent, the parent's process group, a probe of the parent (signal 0)
# and the socket, and ends a child of its own. The parent leads a session of its own: a signal
# that got through reaches no process of the test's.
TRIES = """
import fcntl, os, signal, socket, subprocess, sys, time
sys.path.insert(0, {here!r})
import scope

hits = set()
for number in range(signal.SIGRTMIN, signal.SIGRTMIN + 3):
    signal.signal(number, lambda n, _: hits.add(n))
outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
outside.bind(b"\\0" + {name!r}.encode())
outside.listen(1)
ready, done = os.pipe()
parent = os.getpid()
child = os.fork()
if child == 0:
    os.setpgid(0, 0)  # a group of its own, as the worker has: kill(0) is then its own
    done_, why = {how}
    tried = [str(done_)]

    def attempt(name, call):
        try:
            call()
            tried.append(name + " sent")
        except PermissionError:
            tried.append(name + " refused")

    attempt("pid", lambda: os.kill(parent, signal.SIGRTMIN))  # pid: SIGRTMIN
    attempt("group", lambda: os.killpg(os.getpgid(parent), signal.SIGRTMIN + 1))
    attempt("probe", lambda: os.kill(parent, 0))
    def sigio():  # the parent made a pipe's owner: the kernel signals it when the pipe is ready
        r, w = os.pipe()
        fcntl.fcntl(r, fcntl.F_SETOWN, parent)
        fcntl.fcntl(r, 10, signal.SIGRTMIN + 2)  # F_SETSIG
        fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)
        os.write(w, b"x")

    attempt("sigio", sigio)
    attempt("socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(b"\\0" + {name!r}.encode()))
    own = subprocess.Popen(["sleep", "60"])
    own.send_signal(signal.SIGTERM)
    tried.append(f"own child ended by {{-own.wait()}}")
    os.write(done, (";".join(tried) + ";" + why).encode())
    os._exit(0)
os.waitpid(child, 0)
deadline = time.time() + 2.0  # a signal that got through is handled by then, on a loaded machine too
while len(hits) < 3 and time.time() < deadline:
    time.sleep(0.02)
print(os.read(ready, 4096).decode() + ";hits=" + str(len(hits)))
"""


def _tries(how: str, tmp_path: Path) -> list[str]:
    name = f"arena-scope-test-{os.getpid()}-{id(tmp_path)}"
    code = TRIES.format(here=HERE, name=name, how=how)
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, start_new_session=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")


def test_unscoped_every_try_reaches_the_parent(tmp_path):
    # The control: the tries below are refused by the scope, not by themselves.
    done, pid, group, probe, sigio, sock, own, why, hits = _tries("(False, 'none')", tmp_path)
    assert (pid, group, probe, sigio, sock) == ("pid sent", "group sent", "probe sent", "sigio sent", "socket sent")
    assert int(hits.removeprefix("hits=")) == 3  # pid, group and SIGIO, each its own number


def test_landlock_scopes_reach_only_the_processes_inside(tmp_path):
    if scope.landlock_abi()[0] < 6:
        pytest.skip(f"this kernel's Landlock has no scopes ({scope.landlock_abi()[1]})")
    done, pid, group, probe, sigio, sock, own, why, hits = _tries("scope.landlock()", tmp_path)
    assert (done, pid, group, probe, sock, own, hits) == (
        "True",
        "pid refused",
        "group refused",
        "probe refused",
        "socket refused",
        "own child ended by 15",
        "hits=0",
    ), why
    assert "Landlock ABI" in why


FILTERED = {
    "alone": "scope.signal_filter(os.getppid())",
    # scope() where the kernel has no Landlock scopes: planted by replacing its first try
    "fallback": "(setattr(scope, 'landlock', lambda: (False, 'not scoped: no scopes (planted)')), scope.scope())[1]",
}


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="the filter knows these machines")
@pytest.mark.parametrize("how", FILTERED.values(), ids=FILTERED.keys())
def test_the_signal_filter_refuses_signals_aimed_at_the_judge(tmp_path, how):
    done, pid, group, probe, sigio, sock, own, why, hits = _tries(how, tmp_path)
    assert (done, pid, group, probe, own, hits) == (
        "True",
        "pid refused",
        "group refused",
        "probe refused",
        "own child ended by 15",
        "hits=0",
    ), why
    assert sigio == "sigio refused"
    assert sock == "socket sent"  # a filter reads no socket address: only Landlock scopes sockets
    assert "seccomp" in why


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the numbers below are x86_64's")
def test_the_filter_refuses_what_it_cannot_read_the_target_of(tmp_path):
    code = f"""
import ctypes, os, signal, sys
sys.path.insert(0, {HERE!r})
import scope
assert scope.signal_filter(os.getppid())[0]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = []
for number, args in ((62, (-1, 0)), (200, (os.getppid(), 0)), (424, (0, 0, 0, 0)), (72, (0, 15, 0)), (16, (0, 0x8901, 0)), (62, (os.getpid(), 0)), (72, (0, 1, 0))):
    got = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    results.append(str(ctypes.get_errno()) if got < 0 else "ok")
print(",".join(results))
"""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, start_new_session=True
    )
    assert done.returncode == 0, done.stderr
    # kill(-1), tkill(the judge), pidfd_send_signal, F_SETOWN_EX, FIOSETOWN: EPERM (1);
    # kill(itself, 0) and F_GETFD: allowed
    assert done.stdout.split() == ["1,1,1,1,1,ok,ok"]


def test_the_filter_program_is_whole_instructions_with_jumps_inside_it():
    program = scope.filter_program("x86_64", 1234, 1200)
    count = len(program) // 8
    assert len(program) % 8 == 0 and count == 29
    for index in range(count):
        op, yes, no, _ = struct.unpack_from("<HBBI", program, 8 * index)
        if op in (0x15, 0x35):
            assert index + 1 + max(yes, no) < count  # every jump lands on an instruction of the program


def test_a_process_of_several_threads_is_not_scoped_and_says_why():
    code = (
        f"import sys, threading, time; sys.path.insert(0, {HERE!r}); import scope;"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); print(scope.scope())"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "(False, 'not scoped: 2 threads (a domain or a filter binds only its caller)')"
