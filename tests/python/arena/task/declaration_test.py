"""declaration.build_task: the meaning of a well-formed declaration, each refusal naming its field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.errors import TaskDeclarationError
from arena.task.declaration import build_task
from arena.task.task import Category

BUILD_FILE = "tasks/triton2triton/softmax/BUILD"


def _folder(root: Path, files: dict[str, str]) -> Path:
    folder = root / "tasks" / "triton2triton" / "softmax"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_good_declaration_builds_its_task(tmp_path: Path, triton_fields: dict[str, Any], triton_files) -> None:
    task = build_task(triton_fields, BUILD_FILE, _folder(tmp_path, triton_files), tmp_path)
    assert task.name == "softmax" and task.category is Category.TRITON2TRITON
    assert (task.entry.file, task.entry.symbol) == ("kernel.py", "softmax")
    assert [c.name for c in task.cases if c.timed] == ["big"] and task.editable == ("kernel.py",)
    assert task.skip == "" and task.timeout is None


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"entry": "kernel.py"}, "entry", "must be 'file:symbol'"),
        ({"entry": "other.py:softmax"}, "entry", "is not in the baseline"),
        ({"reference": "missing.py:softmax"}, "reference", "missing.py"),
        ({"sources": ["kernel.py"]}, "sources", "sources are never editable"),
        ({"abi": ["x", "M"]}, "abi", "'M' is not an input or a scalar"),
        ({"flops": "5*M*K"}, "flops", "case"),
        ({"forbidden": ["torch.soft-max"]}, "forbidden", "is not a dotted name"),
        ({"skip": "   "}, "skip", "give the reason"),
        ({"timeout": 0}, "timeout", "must be > 0"),
        ({"name": "a/b"}, "name", "must not contain"),
    ],
)
def test_each_meaning_error_names_the_file_target_and_field(
    tmp_path: Path, triton_fields: dict[str, Any], triton_files, change: dict[str, Any], field: str, says: str
) -> None:
    folder = _folder(tmp_path, triton_files)
    with pytest.raises(TaskDeclarationError) as caught:
        build_task({**triton_fields, **change}, BUILD_FILE, folder, tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{BUILD_FILE}: kernel_task") and f"field '{field}'" in message and says in message


def test_skip_and_timeout_are_kept(tmp_path: Path, triton_fields: dict[str, Any], triton_files) -> None:
    folder = _folder(tmp_path, triton_files)
    task = build_task({**triton_fields, "skip": " flaky on MI300X ", "timeout": 90}, BUILD_FILE, folder, tmp_path)
    assert task.skip == "flaky on MI300X" and task.timeout == 90.0
