"""Tier `child`: the imported fixture task through `arena validate-task` and the real harness (on
CPU here): the reference passes arena's float64 check and the copied kernel evaluates correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main as cli
from arena.importer.importer import import_checkout


def test_the_imported_task_validates(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    task = "tasks/triton2triton/vllm/fake_scale"
    assert cli.main(["--repo-root", str(out), "validate-task", "--task", task, "--backend", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "ok    reference agrees with float64 on case 'shape1'" in printed
    assert "ok    baseline evaluates correct" in printed
    assert f"{task}:fake_scale: valid" in printed
