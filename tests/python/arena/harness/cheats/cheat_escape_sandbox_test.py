# Attacks on what lies outside the run: a daemon that outlives the evaluation (to rewrite the score
# cache or the harness later), reading the score cache's key or the repository's exemplars,
# editing the harness's sources, and reaching the network. Names are built at run time, so the
# static check does not stop them; the OS sandbox (harness/sandbox.py) must.
# The candidate computes the right answer only if every escape failed: correct cases mean all were
# stopped, and the host-side checks below confirm it; the daemon itself is CHEAT_DETECTED.

import os
import re
import socket
import textwrap
from pathlib import Path

import pytest

import arena.harness
from arena.environment.probe import sandbox_tool
from arena_testing.harness_tasks import TRITON_ADD

pytestmark = pytest.mark.skipif(not sandbox_tool(), reason="no OS sandbox on this machine (bubblewrap)")

ESCAPES = """
import os
_sys = getattr(os, "sy" + "s")
_builtins = _sys.modules["builti" + "ns"]
_imp = getattr(_builtins, "__imp" + "ort__")
_open = getattr(_builtins, "op" + "en")
_escaped = []


def _try(name, action):
    try:
        action()
        _escaped.append(name)
    except Exception:
        pass


_sp = _imp("sub" + "process")
_sp.Popen(["sh", "-c", "sleep 300; : {token}"], start_new_session=True)
_try("read the cache key", lambda: _open({key!r}, "rb").read())
_try("list the repository", lambda: os.listdir({repo!r}))
_try("edit the harness", lambda: _open({harness!r}, "a").write("# tampered\\n"))
_sock = _imp("sock" + "et")
_try("reach the host", lambda: _sock.create_connection(("127.0.0.1", {port}), timeout=2).close())
"""

ADD = """
def add(x, y):
    z = torch.empty_like(x)
    wrong = x if _escaped else y  # an escape turns the answer into x + x
    _add_kernel[(triton.cdiv(x.numel(), 1024),)](x, wrong, z, x.numel(), BLOCK=1024)
    return z
"""


def _alive_with(token: str) -> list[int]:
    """Host processes whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_nothing_outside_the_job_is_reachable_and_nothing_outlives_it(run_candidate, tmp_path):
    secrets = tmp_path / "state"
    secrets.mkdir()
    (secrets / "scores.key").write_bytes(b"k" * 32)
    repo = tmp_path / "repo" / "tasks"
    repo.mkdir(parents=True)
    harness = Path(arena.harness.__file__).parent / "check.py"
    before = harness.read_bytes()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    token = f"arena-daemon-{os.getpid()}-{id(tmp_path)}"
    escapes = ESCAPES.format(
        token=token,
        key=str(secrets / "scores.key"),
        repo=str(repo),
        harness=str(harness),
        port=listener.getsockname()[1],
    )
    source = TRITON_ADD.replace("\ndef add(x, y):", textwrap.dedent(escapes) + "\n\ndef _unused(x, y):") + ADD
    result = run_candidate(source)
    # Every escape failed inside the sandbox (the answers are right) and the daemon, still running
    # beside the calls, is caught.
    assert result.status == "CHEAT_DETECTED", result.errors
    assert result.cases and all(case.correct for case in result.cases), result.cases
    assert _alive_with(token) == []  # the daemon died with the sandbox's PID namespace
    assert any(re.search(r"left [1-9]\d* process\(es\) running", error) for error in result.errors), result.errors
    assert harness.read_bytes() == before
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()


def test_the_same_candidate_without_the_sandbox_would_escape(run_candidate, tmp_path, monkeypatch):
    # The control: with the sandbox turned off, the reachable escapes succeed and the candidate's
    # answer turns wrong, so the test above cannot pass for want of a working attack. (Only the
    # harmless escapes here: the harness's sources are not offered for editing.)
    from arena.harness import launch

    monkeypatch.setattr(launch, "sandbox_tool", lambda: "")
    secrets = tmp_path / "state"
    secrets.mkdir()
    (secrets / "scores.key").write_bytes(b"k" * 32)
    token = f"arena-daemon-control-{os.getpid()}"
    escapes = ESCAPES.format(
        token=token, key=str(secrets / "scores.key"), repo=str(tmp_path), harness="/nonexistent/x", port=1
    )
    source = TRITON_ADD.replace("\ndef add(x, y):", textwrap.dedent(escapes) + "\n\ndef _unused(x, y):") + ADD
    try:
        result = run_candidate(source)
        # The escapes worked: the answers are wrong (the verdict itself may name the daemon first).
        assert result.status in ("INCORRECT", "CHEAT_DETECTED"), result.errors
        assert result.cases and not all(case.correct for case in result.cases), result.cases
        # Even outside a sandbox the daemon does not survive the run: it lived in the worker's own
        # PID namespace (harness/apart.py), which ended with the worker.
        assert _alive_with(token) == []
    finally:
        for pid in _alive_with(token):
            os.kill(pid, 9)
