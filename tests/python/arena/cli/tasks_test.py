from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main as cli

BUILD = """kernel_task(
    name="{name}",
    category="triton2triton",
    description="Doubles x. {name}",
    baseline=["kernel.py"],
    entry="kernel.py:double",
    signature="double(x: [N] $dtype) -> [N] $dtype",
    reference="baseline",
    inputs=[{{"name": "x", "shape": ["N"]}}],
    outputs=[{{"name": "y", "shape": ["N"]}}],
    cases=[{{"name": "a", "dims": {{"N": 8}}, "dtype": "float32", "seed": 1, "timed": True}},
           {{"name": "b", "dims": {{"N": 9}}, "dtype": "float16", "seed": 2}}],
)
"""


def make_repo(root: Path, names: tuple[str, ...] = ("zeta", "alpha")) -> Path:
    (root / "pants.toml").write_text("")
    for name in names:
        folder = root / "tasks" / "triton2triton" / name
        folder.mkdir(parents=True)
        (folder / "BUILD").write_text(BUILD.format(name=name))
        (folder / "kernel.py").write_text("def double(x):\n    return 2 * x\n")
    return root


def test_json_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path)
    assert cli.main(["--repo-root", str(tmp_path), "tasks", "--json", "-"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["address"] for row in rows] == [
        "tasks/triton2triton/alpha:alpha",
        "tasks/triton2triton/zeta:zeta",
    ]
    row = rows[0]
    assert set(row) == {
        "address",
        "category",
        "digest",
        "task_dir",
        "editable_files",
        "entry",
        "signature",
        "description",
    }
    assert row["task_dir"] == "tasks/triton2triton/alpha"
    assert row["editable_files"] == ["kernel.py"]
    assert row["entry"] == "kernel.py:double" and row["category"] == "triton2triton"
    # The two tasks differ only in name and description, which no score depends on.
    assert len(row["digest"]) == 64 and row["digest"] == rows[1]["digest"]


def test_json_to_file_from_a_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(tmp_path, ("alpha",))
    monkeypatch.chdir(tmp_path / "tasks" / "triton2triton")
    out = tmp_path / "out.json"
    assert cli.main(["tasks", "--json", str(out)]) == 0
    assert [row["address"] for row in json.loads(out.read_text())] == ["tasks/triton2triton/alpha:alpha"]


def test_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path)
    assert cli.main(["--repo-root", str(tmp_path), "tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ADDRESS", "CATEGORY", "CASES", "TIMED", "ENTRY", "DIGEST"]
    assert lines[1].split()[:5] == [
        "tasks/triton2triton/alpha:alpha",
        "triton2triton",
        "2",
        "1",
        "kernel.py:double",
    ]
    # Aligned: every column starts at the same offset on every line.
    column = lines[0].index("CATEGORY")
    assert lines[1][column:].startswith("triton2triton") and lines[2][column:].startswith("triton2triton")
    assert lines[-1] == "2 task(s)"


def test_category_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path)
    assert cli.main(["--repo-root", str(tmp_path), "tasks", "--category", "hip2hip", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == []
