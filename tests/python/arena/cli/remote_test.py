"""`arena evaluate --runner` and `arena tasks --runner`: the same commands, answered by a runner over gRPC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.cli.main import main

ADD = "tasks/triton2triton/add:add"


@pytest.fixture
def remote(add_repo: Path, tmp_path: Path, fake_harness: list[Any], cpu_machine: Any) -> Iterator[Any]:
    """A runner in this process, serving gRPC on 127.0.0.1, with the fake harness behind it."""
    pytest.importorskip("arena.v1.runner_pb2", reason="the generated arena.v1 modules (Pants codegen)")
    from arena.api.embedded import start_embedded_runner
    from arena.runner.runner import open_runner

    served = start_embedded_runner(
        add_repo, open_runner(add_repo, tmp_path / "remote", lanes=("cpu",), store_path=tmp_path / "remote.sqlite")
    )
    try:
        yield served
    finally:
        served.stop()


def test_evaluate_through_a_runner(
    remote: Any, add_repo: Path, fake_harness: list[Any], cache_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "e.json"
    argv = ["--repo-root", str(add_repo), "evaluate", "--task", ADD, "--runner", remote.address,
            "--token", remote.token, "--json", str(out)]  # fmt: skip
    assert main(argv) == 0
    evaluation = json.loads(out.read_text())
    assert (evaluation["task"], evaluation["status"]) == (ADD, "PASSED")
    assert len(fake_harness) == 1  # the runner ran it...
    assert not (cache_dir / "scores.sqlite").exists()  # ...with its own cache, not this process's


def test_an_invalid_candidate_is_refused_before_it_reaches_the_runner(
    remote: Any, add_repo: Path, fake_harness: list[Any], tmp_path: Path
) -> None:
    candidate = tmp_path / "cand"
    candidate.mkdir()
    (candidate / "other.py").write_text("x = 1\n")  # outside the allow-list
    out = tmp_path / "e.json"
    argv = ["--repo-root", str(add_repo), "evaluate", "--task", ADD, "--candidate", str(candidate),
            "--runner", remote.address, "--token", remote.token, "--json", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(out.read_text())["status"] == "INVALID_CANDIDATE"
    assert fake_harness == []


def test_tasks_through_a_runner(
    remote: Any, add_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    local = main(["--repo-root", str(add_repo), "tasks", "--json", "-"]) == 0 and json.loads(capsys.readouterr().out)
    monkeypatch.setenv("ARENA_RUNNER", remote.address)
    monkeypatch.setenv("ARENA_TOKEN", remote.token)
    assert main(["--repo-root", str(add_repo), "tasks", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == local  # what the runner shows agents: the same rows
