"""A task's `timeout` and `skip` fields, as the commands apply them (docs/task-format.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena_testing.add_task import write_add_task

TASK = "tasks/triton2triton/add"


def test_the_task_timeout_replaces_the_default_and_an_explicit_one_wins(
    tmp_path: Path, fake_harness: list[Any], cache_dir: Path, cpu_machine: Any
) -> None:
    repo = write_add_task(tmp_path / "repo", timeout=42)
    assert cli.main(["--repo-root", str(repo), "evaluate", "--task", TASK, "--no-cache"]) == 0
    assert cli.main(["--repo-root", str(repo), "evaluate", "--task", TASK, "--no-cache", "--timeout", "7"]) == 0
    assert [settings.timeout_s for _, settings in fake_harness] == [42.0, 7.0]


def test_a_suite_leaves_a_skipped_task_out_and_says_why(
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = write_add_task(tmp_path / "repo", skip="needs FP8 hardware")
    assert cli.main(["--repo-root", str(repo), "suite", "--category", "triton2triton"]) == 0
    assert "skipped tasks/triton2triton/add:add: needs FP8 hardware" in capsys.readouterr().out
    assert fake_harness == []


def test_validating_a_skipped_task_checks_its_declaration_only(
    tmp_path: Path, fake_harness: list[Any], cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = write_add_task(tmp_path / "repo", skip="needs FP8 hardware")
    assert cli.main(["--repo-root", str(repo), "validate-task", "--task", TASK]) == 0
    assert "valid declaration; skipped (needs FP8 hardware)" in capsys.readouterr().out
    assert fake_harness == []
    write_add_task(tmp_path / "repo", skip="needs FP8 hardware", flops="2*Q")  # a broken form still fails
    assert cli.main(["--repo-root", str(repo), "validate-task", "--task", TASK]) == 1
