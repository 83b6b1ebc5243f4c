"""`arena compare A B` over submission folders whose evaluations the score cache holds (a stand-in
harness that makes any candidate 2x faster than the baseline, on a GPU machine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena_testing.add_task import ADD_FILES, ADD_KERNEL

TASK = "tasks/triton2triton/add"


def arena(repo: Path, *args: str) -> int:
    return cli.main(["--repo-root", str(repo), *args])


def folder_with(path: Path, kernel: str) -> Path:
    (path / "add").mkdir(parents=True)
    (path / "add" / "kernel.py").write_text(kernel)
    return path


@pytest.fixture
def two_folders(add_repo: Path, tmp_path: Path, fake_harness: list[Any], cache_dir: Path,
                gpu_machine: Any) -> tuple[Path, Path]:  # fmt: skip
    """The baseline's own files (its no-op evaluation) and a faster candidate, both evaluated."""
    unchanged = folder_with(tmp_path / "unchanged", ADD_FILES["kernel.py"])
    faster = folder_with(tmp_path / "faster", ADD_KERNEL.format(op="+", block=512))
    assert arena(add_repo, "evaluate", "--task", TASK) == 0
    assert arena(add_repo, "evaluate", "--task", TASK, "--candidate", str(faster / "add")) == 0
    return unchanged, faster


def test_compare_prints_a_table_and_writes_json(add_repo: Path, two_folders: tuple[Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    unchanged, faster = two_folders
    out = tmp_path / "comparison.json"
    assert arena(add_repo, "compare", f"before={unchanged}", f"after={faster}", "--json", str(out)) == 0
    text = capsys.readouterr().out
    assert "A = before   B = after" in text and "B faster" in text
    assert "geomean speedup ratio B / A  2.0" in text and "Wilcoxon signed-rank" in text
    document = json.loads(out.read_text())
    assert document["ratio"] == pytest.approx(2.0, rel=0.03)
    assert (document["b_faster"], document["ties"], document["a_faster"]) == (1, 0, 0)
    assert document["tasks"][0]["task"] == "tasks/triton2triton/add:add"
    assert document["signed_rank"]["n"] == 1 and document["signed_rank"]["p_value"] == 1.0  # one task proves little


def test_a_set_against_itself_is_a_tie(add_repo: Path, two_folders: tuple[Path, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _, faster = two_folders
    assert arena(add_repo, "compare", str(faster), str(faster), "--json", "-") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["a"] == "faster (A)" and document["b"] == "faster (B)"
    assert document["ratio"] == 1.0 and document["ties"] == 1
    assert document["ratio_ci_low"] <= 1.0 <= document["ratio_ci_high"]


def test_compare_caller_errors_exit_2(add_repo: Path, two_folders: tuple[Path, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    unchanged, _ = two_folders
    assert arena(add_repo, "compare", str(unchanged), str(tmp_path / "nowhere")) == 2
    assert "neither a suite file nor a submissions folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert arena(add_repo, "compare", str(unchanged), str(empty)) == 2
    assert "share no task" in capsys.readouterr().err
