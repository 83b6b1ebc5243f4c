import json
from pathlib import Path
from typing import Any

import pytest
from arena.cli import main as cli


def _suite(repo: Path, *args: str) -> int:
    return cli.main(["--repo-root", str(repo), "suite", "--category", "triton2triton", *args])


def test_baselines_without_a_gpu_exit_0_and_say_what_needs_one(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out_file = tmp_path / "suite.json"
    assert _suite(add_repo, "--json", str(out_file)) == 0
    out = capsys.readouterr().out
    assert "1 triton2triton task(s)" in out
    assert "[1] tasks/triton2triton/add:add  PASSED  untimed" in out
    assert "1/1 correct" in out and "fast_1.0 0%" in out
    assert "1 of 1 evaluation(s) need a GPU" in out
    saved = json.loads(out_file.read_text())
    assert saved["candidates"] == "baselines" and saved["summary"]["tasks"] == 1
    assert saved["evaluations"][0]["label"] == "tasks/triton2triton/add:add"
    assert fake_harness[0][0] is None


def test_exemplars_on_a_gpu_are_timed_and_summarized(
    add_repo: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _suite(add_repo, "--exemplars") == 0
    out = capsys.readouterr().out
    assert "tasks/triton2triton/add:add [exemplars/wide]  PASSED  speedup 2.0" in out
    assert "fast_1.0 100%" in out and "fast_2.0" in out and "need a GPU" not in out


def test_submissions_missing_and_present(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    submissions = tmp_path / "subs"
    submissions.mkdir()
    assert _suite(add_repo, "--submissions", str(submissions)) == 0
    assert "INVALID_CANDIDATE" in capsys.readouterr().out  # no folder for the task: a failure, not a crash
    (submissions / "add").mkdir()
    (submissions / "add" / "kernel.py").write_text("def add(x, y):\n    return x + y\n")
    assert _suite(add_repo, "--submissions", str(submissions), "--tasks", "tasks/triton2triton/add") == 0
    assert "add:add  PASSED" in capsys.readouterr().out
    assert len(fake_harness) == 1


def test_caller_errors_exit_2(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _suite(add_repo, "--tasks", "tasks/triton2triton/nope") == 2
    assert "not triton2triton tasks" in capsys.readouterr().err
    assert _suite(add_repo, "--submissions", str(tmp_path / "missing")) == 2
    assert fake_harness == []


def test_an_empty_category_is_fine(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--repo-root", str(add_repo), "suite", "--category", "hip2hip", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"] == {
        "tasks": 0,
        "correct": 0,
        "timed": 0,
        "geomean_speedup": None,
        "fast_p": {"1.0": 0.0, "1.2": 0.0, "2.0": 0.0},
    }
    assert "0 hip2hip task(s)" in captured.err
