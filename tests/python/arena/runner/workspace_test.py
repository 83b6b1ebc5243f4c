"""The workspace built from a TaskView: which files go where, and what TASK.md says."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.runner.task_view import AMD_REFERENCE_PLATFORM, view_task
from arena.runner.workspace import FolderNotEmpty, render_task_md, workspace_files, write_workspace
from arena.scoring.score import POINTS_COMPILED, POINTS_CORRECT, POINTS_PER_SPEEDUP
from arena.task.load import load_task
from arena.task.tolerance import DEFAULT_TOLERANCES
from arena_testing.add_task import ADD_FILES, write_add_task

ADD = "tasks/triton2triton/add"


def add_view(root: Path, **overrides):  # type: ignore[no-untyped-def]
    repo = write_add_task(root, **overrides)
    return view_task(load_task(repo, ADD), repo, "d" * 64)


def test_the_view_carries_tolerances_scalars_platform_and_scoring(tmp_path: Path) -> None:
    view = add_view(
        tmp_path,
        scalars={"alpha": 0.5, "count": 3, "n": "N"},
        tolerances={"float32": {"atol": 1e-4}},
    )
    assert view.tolerances["float32"].atol == 1e-4 and view.tolerances["float32"].rtol == 1e-5
    assert view.tolerances["float16"] == DEFAULT_TOLERANCES["float16"]
    assert view.scalars == {"alpha": 0.5, "count": 3, "n": "N"}
    assert (view.points_compiled, view.points_correct, view.points_per_speedup) == (
        POINTS_COMPILED,
        POINTS_CORRECT,
        POINTS_PER_SPEEDUP,
    )
    assert "hidden" in view.scoring_rule
    # The default archs include gfx942: measured on the pinned ROCm image.
    assert view.reference_platform == AMD_REFERENCE_PLATFORM


def test_an_nvidia_only_triton_task_names_no_amd_platform(tmp_path: Path) -> None:
    view = add_view(tmp_path, archs=["sm_90"])
    assert view.reference_platform == ""
    assert "MI300X" not in render_task_md(view)


def test_editable_files_go_to_candidate_and_other_baseline_files_to_context(tmp_path: Path) -> None:
    view = add_view(tmp_path, baseline=["kernel.py", "reference.py"], editable=["kernel.py"])
    files = workspace_files(view)
    assert sorted(files) == ["TASK.md", "candidate/kernel.py", "context/reference.py"]
    assert files["candidate/kernel.py"] == ADD_FILES["kernel.py"].encode()
    assert files["context/reference.py"] == ADD_FILES["reference.py"].encode()


def test_task_md_states_scalars_and_overridden_tolerances(tmp_path: Path) -> None:
    text = render_task_md(add_view(tmp_path, scalars={"alpha": 0.5, "n": "N"}, tolerances={"float32": {"atol": 1e-4}}))
    assert "`alpha` = 0.5" in text and "`n` = the dim N" in text
    assert "| float32 | 0.0001 | 1e-05 |" in text
    assert "Reference platform: AMD Instinct MI300X (gfx942) with ROCm 7.1.1" in text


def test_a_baseline_path_leading_outside_the_folder_is_refused(tmp_path: Path) -> None:
    from dataclasses import replace

    from arena.errors import ArenaError

    view = replace(add_view(tmp_path), baseline_files={"../escape.py": b"x"})
    with pytest.raises(ArenaError, match="plain relative path"):
        write_workspace(view, tmp_path / "out")
    assert not (tmp_path / "escape.py").exists()


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("a file")
    with pytest.raises(FolderNotEmpty, match="not a folder"):
        write_workspace(add_view(tmp_path / "repo"), target, force=True)


def test_task_md_says_which_output_is_an_input_written_in_place(tmp_path: Path) -> None:
    view = add_view(tmp_path, outputs=[{"name": "z", "shape": ["N"]}, {"name": "x", "inplace": True}])
    text = render_task_md(view)
    assert "`x` [N] (the case's dtype): the input of this name, written in place" in text
    assert "`z` [N] (the case's dtype)," in text
