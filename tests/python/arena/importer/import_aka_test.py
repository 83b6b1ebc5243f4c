"""`arena import aka CHECKOUT --out DIR [--json FILE|-]`, through the command line's main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main as cli


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "pants.toml").write_text("")
    return tmp_path / "repo"


def test_the_table_lists_every_task_and_the_json_goes_to_stdout(
    repo: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["--repo-root", str(repo), "import", "aka", str(checkout), "--out", str(out), "--json", "-"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (document["tasks"], document["imported"]) == (12, 6)  # 5 hip2hip and torch2hip tasks: none imports
    assert [o["source"] for o in document["outcomes"] if o["imported"]] == [
        "triton2triton/geak_eval/L1/fake_append",
        "triton2triton/rocmbench/fake_softmax",
        "triton2triton/vllm/fake_fill",
        "triton2triton/vllm/fake_quant",
        "triton2triton/vllm/fake_scale",
        "triton2triton/vllm/fake_seeded",
    ]
    table = captured.err.splitlines()
    assert table[0].split() == ["SOURCE", "IMPORTED", "ADDRESS", "OR", "REASON"]
    assert any(line.startswith("triton2triton/rocmbench/fake_add") and "  no  " in line for line in table)
    assert "12 task(s): 6 imported, 6 not imported" in table
    assert f"validate one with: arena --repo-root {out} validate-task --task <address>" in table


def test_the_json_can_go_to_a_file_and_the_table_to_stdout(
    repo: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "import.json"
    argv = ["--repo-root", str(repo), "import", "aka", str(checkout), "--out", str(tmp_path / "out")]
    assert cli.main(argv + ["--json", str(report)]) == 0
    assert json.loads(report.read_text())["imported"] == 6
    assert "tasks/triton2triton/vllm/fake_scale:fake_scale" in capsys.readouterr().out


def test_a_missing_checkout_is_an_error_with_a_clear_message(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--repo-root", str(repo), "import", "aka", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]
    assert cli.main(argv) == cli.EXIT_OTHER_ERROR
    assert "arena import: error: " in capsys.readouterr().err


def test_the_source_and_out_are_required(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match=str(cli.EXIT_USAGE)):
        cli.main(["--repo-root", str(repo), "import", "aka", "somewhere"])
    assert "--out" in capsys.readouterr().err


def test_an_out_folder_among_this_repository_s_tasks_is_refused(
    repo: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = repo / "tasks" / "aka"
    assert cli.main(["--repo-root", str(repo), "import", "aka", str(checkout), "--out", str(out)]) != 0
    assert "is inside this repository's tasks/" in capsys.readouterr().err
    assert not out.exists()
