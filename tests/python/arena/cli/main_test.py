from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from arena.cli import main as cli
from arena.errors import ArenaError, InvalidCandidate, NoDevice, TaskDeclarationError, UnknownTask

SRC = Path(cli.__file__).resolve().parents[2]


def test_every_command_module_has_the_protocol() -> None:
    assert "tasks" in cli.COMMANDS
    for module in cli.COMMANDS.values():
        assert isinstance(module.HELP, str) and module.HELP
        assert callable(module.add_arguments) and callable(module.run)


def test_help_as_a_module() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "arena.cli.main", "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "usage: arena" in done.stdout and "tasks" in done.stdout


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == cli.EXIT_USAGE
    assert "usage: arena" in capsys.readouterr().err


def test_unknown_command_exits_2() -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["no-such-command"])
    assert cast(SystemExit, raised.value).code == 2


def test_errors_map_to_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No pants.toml at or above tmp_path: a plain ArenaError.
    assert cli.main(["--repo-root", str(tmp_path), "tasks"]) == cli.EXIT_OTHER_ERROR
    assert "arena tasks: error: no pants.toml" in capsys.readouterr().err
    assert cli.exit_code_for(UnknownTask("x")) == 3
    assert cli.exit_code_for(TaskDeclarationError("x")) == 4
    assert cli.exit_code_for(InvalidCandidate("x")) == 5
    assert cli.exit_code_for(NoDevice("x")) == 7
    assert cli.exit_code_for(ArenaError("x")) == cli.EXIT_OTHER_ERROR
    assert len(set(cli.EXIT_CODES.values())) == len(cli.EXIT_CODES)


def test_bad_declaration_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pants.toml").write_text("")
    (tmp_path / "tasks" / "hip2hip" / "x").mkdir(parents=True)
    (tmp_path / "tasks" / "hip2hip" / "x" / "BUILD").write_text('kernel_task(name="x")\n')
    assert cli.main(["--repo-root", str(tmp_path), "tasks"]) == 4
    assert "tasks/hip2hip/x/BUILD: kernel_task 'x': field 'category': is required" in capsys.readouterr().err


def test_the_exit_code_table_in_the_docs_is_the_one_the_code_uses() -> None:
    import re

    text = (SRC.parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    documented = {int(code): name for code, name in re.findall(r"^\| (\d+) \| `(\w+)`", text, re.MULTILINE)}
    assert documented == {code: kind.__name__ for kind, code in cli.EXIT_CODES.items()}
    assert f"| {cli.EXIT_USAGE} |" in text and f"| {cli.EXIT_OTHER_ERROR} |" in text


def test_version_names_the_harness_digest(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.harness.version import harness_version

    with pytest.raises(SystemExit) as raised:
        cli.main(["--version"])
    assert cast(SystemExit, raised.value).code == 0
    assert harness_version()[:12] in capsys.readouterr().out


def test_repo_root_and_json_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    repo = tmp_path / "repo"
    (repo / "tasks" / "hip2hip" / "x").mkdir(parents=True)
    (repo / "pants.toml").write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = os.getcwd()
    os.chdir(elsewhere)  # no pants.toml above: only --repo-root finds the repository
    try:
        assert cli.main(["tasks", "--repo-root", str(repo), "--json"]) == 0
    finally:
        os.chdir(cwd)
    assert json.loads(capsys.readouterr().out) == []
