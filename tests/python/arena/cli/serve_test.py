"""`arena serve` in a child process on 127.0.0.1:0, and `arena leaderboard` against it."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import serve
from arena.cli.main import main
from arena.client.client import Client
from arena.errors import ArenaError
from arena.executors.local import LocalExecutor
from arena.executors.remote import RemoteExecutor

# The committed third_party/rocm/image.lock before anyone has resolved it: the tag, no digest.
UNRESOLVED_LOCK = {
    "digest": "",
    "repository": "rocm/pytorch",
    "resolved": False,
    "resolved_date": "",
    "resolved_with": "",
    "tag": "rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.10.0",
}

BUILD = """
kernel_task(
    name="softmax",
    category="triton2triton",
    description="Row-wise softmax.",
    baseline=["kernel.py"],
    entry="kernel.py:softmax",
    signature="softmax(x: [M, N] $dtype) -> [M, N] $dtype",
    reference="baseline",
    inputs=[{"name": "x", "shape": ["M", "N"], "dtype": "$dtype"}],
    outputs=[{"name": "y", "shape": ["M", "N"], "dtype": "$dtype"}],
    cases=[{"name": "big", "dims": {"M": 64, "N": 64}, "dtype": "float32", "seed": 2, "timed": True}],
)
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    task_dir = tmp_path / "repo" / "tasks" / "triton2triton" / "softmax"
    task_dir.mkdir(parents=True)
    (tmp_path / "repo" / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(BUILD)
    (task_dir / "kernel.py").write_text("def softmax(x):\n    return x.softmax(-1)\n")
    return tmp_path / "repo"


def child_environment(**extra: str) -> dict[str, str]:
    # The child imports arena the way this test did.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), **extra}


def test_serve_answers_clients_and_stops_on_sigterm(repo: Path, tmp_path: Path, monkeypatch) -> None:
    command = [sys.executable, "-m", "arena.cli.main", "--repo-root", str(repo), "serve"]
    command += ["--listen", "127.0.0.1:0", "--state", str(tmp_path / "state"), "--devices", "cpu"]
    child = subprocess.Popen(
        command,
        env=child_environment(ARENA_TOKENS="alice:a-token"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("arena runner on 127.0.0.1:"), child.stderr.read()  # type: ignore[union-attr]
        assert re.search(r"control groups (cgroup v[12] \(memory, pids, cpuset\) in /|none \(.+\))", line), line
        users = r"a uid of its own of \d+-\d+" if os.geteuid() == 0 else "the runner's own, in a user namespace each"
        assert re.search(f"sandbox users {users}, ", line), line
        address = line.split()[3].rstrip(":")
        with Client(address, "a-token", timeout_s=10) as client:
            assert [task.address for task in client.list_tasks()] == ["tasks/triton2triton/softmax:softmax"]
        out = tmp_path / "rows.json"
        os.environ["ARENA_TOKEN"] = "a-token"
        try:
            assert main(["--repo-root", str(repo), "leaderboard", "--runner", address, "--json", str(out)]) == 0
        finally:
            del os.environ["ARENA_TOKEN"]
        assert json.loads(out.read_text()) == []
        flagged = [
            "--repo-root",
            str(repo),
            "leaderboard",
            "--runner",
            address,
            "--token",
            "a-token",
            "--json",
            str(out),
        ]
        assert main(flagged) == 0 and json.loads(out.read_text()) == []  # the token as a flag
        assert main(flagged[:5] + ["--token", "wrong", "--json", str(out)]) == 9  # refused: the flag is used
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=20) == 0
        assert (tmp_path / "state" / "runner.sqlite").is_file()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)


def test_serve_refuses_to_start_without_tokens(repo: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("ARENA_TOKENS", raising=False)
    code = main(["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "s")])
    assert code != 0 and "no tokens" in capsys.readouterr().err


def test_serve_refuses_malformed_limits_at_start(repo: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token")
    monkeypatch.setenv("ARENA_JOB_LIMITS", "disk=lots")
    code = main(["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "s")])
    assert code != 0 and "ARENA_JOB_LIMITS='disk=lots'" in capsys.readouterr().err  # not at every job


def test_serve_refuses_a_control_group_folder_it_cannot_use_at_start(repo: Path, tmp_path: Path, capsys, monkeypatch):
    from arena.limits import cgroups

    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token")
    monkeypatch.setenv(cgroups.VARIABLE, str(tmp_path))  # a folder, but no cgroup v2 group
    cgroups.found.cache_clear()
    try:
        code = main(["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "s")])
    finally:
        cgroups.found.cache_clear()
    assert code != 0 and "not a cgroup v2 group" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner picks its children's users")
def test_serve_refuses_sandbox_users_that_are_root_at_start(repo: Path, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token")
    monkeypatch.setenv("ARENA_SANDBOX_USER", "0-100")
    code = main(["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "s")])
    assert code != 0 and "ARENA_SANDBOX_USER='0-100' does not name unprivileged users" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner leases its children's users")
def test_serve_refuses_a_lease_folder_others_may_write_at_start(repo: Path, tmp_path: Path, capsys, monkeypatch):
    from arena.environment import users

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token")
    monkeypatch.delenv("ARENA_SANDBOX_USER", raising=False)
    monkeypatch.setattr(users, "LOCKS", (shared,))
    code = main(["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "s")])
    assert code != 0 and f"{shared} must be a folder only root may write" in capsys.readouterr().err


def _serve_args(repo_root: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    args = parser.parse_args(list(extra))
    args.repo_root = repo_root
    return args


def test_the_executor_flag_picks_where_evaluations_run(tmp_path: Path) -> None:
    assert isinstance(serve.build_executor(_serve_args(tmp_path), ("0",)), LocalExecutor)
    remote = serve.build_executor(
        _serve_args(tmp_path, "--executor", "remote", "--remote", "pool:8980", "--remote-image", "r@sha256:ab"), ("0",)
    )
    assert isinstance(remote, RemoteExecutor)
    assert (remote.endpoint, remote.gpu, remote.image) == ("pool:8980", "MI300X", "r@sha256:ab")
    with pytest.raises(ArenaError, match="--remote HOST:PORT"):
        serve.build_executor(_serve_args(tmp_path, "--executor", "remote"), ("0",))
    # What the runner prints of its lanes: with their CPUs where each keeps to its own.
    local = LocalExecutor(cpu_sets={0: frozenset(range(8)), 1: frozenset(range(8, 16))})
    assert serve.described_lanes(("0", "1"), local) == "0 (CPUs 0-7),1 (CPUs 8-15)"
    assert serve.described_lanes(("0", "1"), remote) == serve.described_lanes(("0", "1"), LocalExecutor()) == "0,1"


def test_the_docker_executor_refuses_an_image_not_locked_by_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.executors import docker

    lock = tmp_path / "third_party" / "rocm" / "image.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps(UNRESOLVED_LOCK))
    monkeypatch.setattr(docker, "host_vendor", lambda: "rocm")  # an MI300X host: the ROCm lock is the one read
    with pytest.raises(ArenaError) as refused:
        serve.build_executor(_serve_args(tmp_path, "--executor", "docker"), ("0",))
    assert "third_party/rocm/image.lock" in str(refused.value) and "no GPU" not in str(refused.value)
