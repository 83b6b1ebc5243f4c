"""A pool worker's command runs in bubblewrap as a local harness child does (arena.pool.sandbox):
it sees the system read-only, the interpreter its PATH names read-only, its input root writable
but the oracle, the baseline and the arena sources; under a root worker it is a uid of its own.
Before, it ran as the worker's user with the whole file system in view: on a root worker a
candidate read /etc/shadow and could write into the interpreter's site-packages, which every
later command of that worker imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
    "variables": sorted(os.environ),
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


def test_the_command_sees_only_its_lease_and_what_it_runs_on(tmp_path: Path, monkeypatch) -> None:
    planted = _site_packages() / "planted_by_candidate.py"
    monkeypatch.setenv("ARENA_POOL_TOKEN", "the-workers-token")  # the worker's, never its commands'
    code, report, stderr = run_probe(tmp_path)
    try:
        assert code == 0, stderr
        assert report["shadow"] in ("PermissionError", "FileNotFoundError"), report
        assert report["site"] in ("OSError", "PermissionError"), report  # read-only: no later command changed
        assert not planted.exists()
        assert report["oracle"] in ("OSError", "PermissionError"), report
        assert report["worker_file"] == "FileNotFoundError", report  # not in its view at all
        assert report["candidate"] == "done" and report["tmp"] == "done", report
        assert "ARENA_POOL_TOKEN" not in str(report["variables"]), report
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


def test_the_interpreter_the_path_finds_is_shown_with_its_packages(tmp_path: Path) -> None:
    shown = sandbox.interpreter_folders(PATH, tmp_path)
    assert str(_site_packages()) in shown and os.path.dirname(os.path.realpath(sys.executable)) in shown
    assert sandbox.interpreter_folders("/nonexistent", tmp_path) == ()


def _run(tmp_path: Path, arguments: list[str], environment: dict[str, str], files: dict[str, bytes]) -> Path:
    """A crafted action's command, its `files` (executable) in its input root; that root returned."""
    root = tmp_path / "lease"
    inputs = root / "root"
    inputs.mkdir(parents=True)
    for name, data in files.items():
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_bytes(data)
        (inputs / name).chmod(0o755)
    pb = reapi_protos()[0]
    variables = [pb.Command.EnvironmentVariable(name=k, value=v) for k, v in environment.items()]
    command = pb.Command(arguments=arguments, environment_variables=variables)
    work = Worker(WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu"))
    try:
        work._run_command(Run("lease", None), command, inputs, root, limit=60)
    finally:
        work.close()
    return inputs


MARK = (
    "#include <stdio.h>\n#include <unistd.h>\n"
    "__attribute__((constructor)) static void mark(void) {\n"
    '    FILE *f = fopen("%s", "a");\n'
    '    if (f) { fprintf(f, "%%d\\n", (int)getuid()); fclose(f); }\n'
    "}\n"
)


def test_an_actions_ld_preload_reaches_its_command_alone(tmp_path: Path) -> None:
    # LD_PRELOAD=./mark.so, a library the action ships in its input root (the wrappers' working
    # folder): every wrapper before the command (setpriv, confine.py's interpreter, bubblewrap or
    # unshare) loaded it, as the worker's user: on a GPU machine root, outside any sandbox.
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no C compiler to build the planted library")
    marks = tmp_path / "marks"  # outside the lease: only a process outside the sandbox reaches it
    (tmp_path / "mark.c").write_text(MARK % marks)
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(tmp_path / "mark.so"), str(tmp_path / "mark.c")], check=True)
    library = (tmp_path / "mark.so").read_bytes()
    _run(tmp_path, ["/bin/true"], {"LD_PRELOAD": "./mark.so", "PATH": "/usr/bin:/bin"}, {"mark.so": library})
    assert not marks.exists() or marks.read_text() == "", marks.read_text()  # loaded by no wrapper


def test_an_actions_own_python3_is_never_run_by_the_worker(tmp_path: Path) -> None:
    # The worker asks the action's python3 for its folders: one the action ships, first on its
    # PATH, ran as the worker's user outside any sandbox.
    marks = tmp_path / "marks"
    fake = f'#!/bin/sh\nid -u >> {marks}\nexec /usr/bin/env python3 "$@"\n'.encode()
    path = "bin:/usr/bin:/bin"  # relative: the wrappers' working folder is the input root
    _run(tmp_path, ["/bin/true"], {"PATH": path}, {"bin/python3": fake})
    inputs = _run(
        tmp_path / "b", ["/bin/true"], {"PATH": f"{tmp_path}/b/lease/root/bin:/usr/bin"}, {"bin/python3": fake}
    )
    assert (inputs / "bin/python3").exists()
    assert not marks.exists(), marks.read_text()


def test_a_trusted_folder_that_is_a_link_shows_nothing_of_where_it_points(tmp_path: Path) -> None:
    # An action whose `src` links to a folder of the host's: bound read-only as it stood, the
    # sandbox showed that folder (a root worker's keys, say) at the link's path.
    secrets = tmp_path / "host-secrets"
    secrets.mkdir()
    (secrets / "key").write_text("HOST-KEY")
    root = tmp_path / "lease"
    inputs = root / "root"
    inputs.mkdir(parents=True)
    (inputs / "src").symlink_to(secrets)
    pb = reapi_protos()[0]
    command = pb.Command(arguments=["sh", "-c", "cat src/key > seen 2>&1; true"])
    work = Worker(WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu"))
    try:
        code, _ = work._run_command(Run("lease", None), command, inputs, root, limit=60)
    finally:
        work.close()
    assert code == 0, (root / "stderr").read_text()
    assert "HOST-KEY" not in (inputs / "seen").read_text()
