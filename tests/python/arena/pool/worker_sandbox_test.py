"""A pool worker's command runs in bubblewrap as a local harness child does (arena.pool.sandbox):
it sees the system read-only, the interpreter its PATH names read-only, its input root writable
but the oracle, the baseline and the arena sources; under a root worker it is a uid of its own.
Before, it ran as the worker's user with the whole file system in view: on a root worker a
candidate read /etc/shadow and could write into the interpreter's site-packages, which every
later command of that worker imports."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from arena.environment.probe import sandbox_tool
from arena.pool import sandbox, worker
from arena.pool.worker import Run, Worker, WorkerSettings
from arena.reapi.cas import reapi_protos

pytestmark = pytest.mark.skipif(not sandbox_tool(), reason="no OS sandbox on this machine (bubblewrap)")
PATH = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"  # the python3 the action's PATH finds
SITE = "import site; print(site.getsitepackages()[0])"

# What a hostile candidate tries from inside: the host's secrets, the interpreter every later
# command imports, the oracle, a file of the worker's outside its lease; and what it is.
PROBE = r"""
import json, os, pwd, subprocess, sys, site
from pathlib import Path

def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return type(error).__name__

site_packages = Path(site.getsitepackages()[0])
report = {
    "uid": os.getuid(),
    "name": pwd.getpwuid(os.getuid()).pw_name,
    "shadow": attempt(lambda: open("/etc/shadow").read()),
    "site": attempt(lambda: (site_packages / "planted_by_candidate.py").write_text("x = 1\n")),
    "oracle": attempt(lambda: Path("run/task/reference.py").write_text("forged\n")),
    "worker_file": attempt(lambda: Path(sys.argv[1]).read_text()),
    "candidate": attempt(lambda: Path("run/candidate/kernel.py").write_text("mine\n")),
    "tmp": attempt(lambda: Path("/tmp/scratch").write_text("mine\n")),
}
Path("report.json").write_text(json.dumps(report))
"""


def run_probe(tmp_path: Path) -> tuple[int, dict[str, object], str]:
    secret = tmp_path / "worker-secret"  # a file of the worker's, outside the lease
    secret.write_text("WORKER-SECRET")
    root = tmp_path / "lease"
    inputs = root / "root"
    for name in ("run/task", "run/baseline", "run/candidate", "src/arena"):
        (inputs / name).mkdir(parents=True)
    (inputs / "run/task/reference.py").write_text("def reference(): pass\n")
    (inputs / "probe.py").write_text(PROBE)
    pb = reapi_protos()[0]
    command = pb.Command(
        arguments=["python3", "probe.py", str(secret)],
        environment_variables=[pb.Command.EnvironmentVariable(name="PATH", value=PATH)],
    )
    settings = WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu")
    work = Worker(settings)  # no call reaches its server
    try:
        code, _ = work._run_command(Run("lease", None), command, inputs, root, limit=120)
    finally:
        work.close()
    stderr = (root / "stderr").read_text()
    report = json.loads((inputs / "report.json").read_text()) if (inputs / "report.json").exists() else {}
    return code, report, stderr


def _site_packages() -> Path:
    import site

    return Path(site.getsitepackages()[0])


def test_the_command_sees_only_its_lease_and_what_it_runs_on(tmp_path: Path) -> None:
    planted = _site_packages() / "planted_by_candidate.py"
    code, report, stderr = run_probe(tmp_path)
    try:
        assert code == 0, stderr
        assert report["shadow"] in ("PermissionError", "FileNotFoundError"), report
        assert report["site"] in ("OSError", "PermissionError"), report  # read-only: no later command changed
        assert not planted.exists()
        assert report["oracle"] in ("OSError", "PermissionError"), report
        assert report["worker_file"] == "FileNotFoundError", report  # not in its view at all
        assert report["candidate"] == "done" and report["tmp"] == "done", report
        assert (tmp_path / "lease/root/run/task/reference.py").read_text() == "def reference(): pass\n"
        if os.geteuid() == 0:  # a root worker's command is a leased user, never root
            assert report["uid"] != 0 and report["name"] == "arena-sandbox", report
    finally:
        planted.unlink(missing_ok=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="the control needs a root worker")
def test_without_the_sandbox_a_root_workers_command_was_root_over_the_host(tmp_path: Path, monkeypatch) -> None:
    # The control: the probe works. The old way (unshare's namespaces only), the command is root,
    # reads the host's secrets and writes where every later command of the worker imports from.
    monkeypatch.setattr(worker, "sandbox_tool", lambda: "")
    planted = _site_packages() / "planted_by_candidate.py"
    try:
        code, report, stderr = run_probe(tmp_path)
        assert code == 0, stderr
        assert report["uid"] == 0 and report["shadow"] == "done" and report["site"] == "done", report
        assert report["worker_file"] == "done" and report["oracle"] == "done", report
    finally:
        planted.unlink(missing_ok=True)


def test_a_worker_names_how_its_commands_are_kept_apart() -> None:
    said = sandbox.isolation()
    assert said.startswith(sandbox_tool()), said
    assert ("a uid of its own" in said) == (os.geteuid() == 0), said


def test_the_interpreter_the_path_finds_is_shown_with_its_packages() -> None:
    shown = sandbox.interpreter_folders(PATH)
    assert str(_site_packages()) in shown and os.path.dirname(os.path.realpath(sys.executable)) in shown
    assert sandbox.interpreter_folders("/nonexistent") == ()
