"""`arena workspace TASK DIR`: from this repository and through a runner (the SDK), the same files;
the editable files byte-for-byte the baseline's; nothing an agent must not see; refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from arena.cli import main as cli
from arena.client.client import Client
from arena.errors import UnknownTask
from arena.runner.workspace import FolderNotEmpty
from arena_testing.add_task import ADD_FILES
from arena_testing.runner_kit import FakeEvaluate, make_runner, serve_runner, tokens  # noqa: F401

ADD = "tasks/triton2triton/add"
ADDRESS = "tasks/triton2triton/add:add"
# What the add task keeps from agents: its exemplar and its wrong candidate.
SECRET_FILES = ("exemplars/wide/kernel.py", "wrong/kernel.py")


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def workspace(repo: Path, folder: Path, *extra: str) -> int:
    return cli.main(["--repo-root", str(repo), "workspace", ADD, str(folder), *extra])


@pytest.fixture
def runner_address(add_repo: Path, make_runner: Callable[..., Any], serve_runner: Callable[..., Any]) -> str:  # noqa: F811
    """A runner over the add repository, served on loopback."""
    return str(serve_runner(make_runner(add_repo, FakeEvaluate())).address)


def test_the_workspace_holds_the_editable_files_and_task_md_only(add_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "ws"
    assert workspace(add_repo, out) == 0
    files = tree(out)
    assert sorted(files) == ["TASK.md", "candidate/kernel.py"]
    assert files["candidate/kernel.py"] == (add_repo / ADD / "kernel.py").read_bytes()
    secrets = [(add_repo / ADD / name).read_bytes() for name in SECRET_FILES]
    assert not any(content in secrets for content in files.values())
    # The reference is not a baseline file here: it stays out too.
    assert ADD_FILES["reference.py"].encode() not in files.values()


def test_task_md_names_signature_cases_tolerances_and_scoring(add_repo: Path, tmp_path: Path) -> None:
    assert workspace(add_repo, tmp_path / "ws") == 0
    text = (tmp_path / "ws" / "TASK.md").read_text()
    assert "Elementwise sum of two vectors." in text
    assert "Signature: `add(x: [N] $dtype, y: [N] $dtype) -> [N] $dtype`" in text
    assert "Entry (what the harness calls): `kernel.py:add`" in text
    assert "| small | N=1000 | float32 | no |  |" in text
    assert f"| big | N={1 << 18} | float32 | yes | 1 |" in text
    assert "| float32 | 1e-05 | 1e-05 |" in text
    assert "Compiles = 20 points; correct on every test case = +100; then +100 x speedup over the baseline." in text
    assert "Hidden cases, with fresh seeds, are drawn at evaluation time" in text
    assert "Target GPU architectures: sm_90, gfx942" in text
    assert "Reference platform: AMD Instinct MI300X (gfx942) with ROCm 7.1.1" in text
    assert "Budget: 3600 seconds of wall clock from opening an attempt, and 3 evaluations in it" in text
    assert f"arena evaluate --task {ADDRESS} --candidate candidate --check-only" in text
    assert f'client.open_attempt("{ADDRESS}")' in text


def test_the_evaluate_command_task_md_gives_accepts_the_workspace(
    add_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_harness: list[Any],
    cpu_machine: Any,
    cache_dir: Path,
) -> None:
    out = tmp_path / "ws"
    assert workspace(add_repo, out) == 0
    (out / "candidate" / "kernel.py").write_text(ADD_FILES["kernel.py"] + "# edited\n")
    monkeypatch.chdir(out)
    command = f"evaluate --task {ADDRESS} --candidate candidate --check-only".split()
    assert f"arena {' '.join(command)}" in (out / "TASK.md").read_text()
    assert cli.main(["--repo-root", str(add_repo), *command]) == 0
    [(candidate, _)] = fake_harness
    assert candidate.files["kernel.py"].endswith(b"# edited\n")


def test_the_sdk_over_a_runner_writes_the_same_workspace(add_repo: Path, tmp_path: Path, runner_address: str) -> None:
    assert workspace(add_repo, tmp_path / "local") == 0
    with Client(runner_address, "alice-token") as client:
        written = client.workspace(ADD, tmp_path / "sdk")
    assert sorted(written) == ["TASK.md", "candidate/kernel.py"]
    assert workspace(add_repo, tmp_path / "cli", "--runner", runner_address, "--token", "alice-token") == 0
    local = tree(tmp_path / "local")
    assert tree(tmp_path / "sdk") == local and tree(tmp_path / "cli") == local
    # An agent's machine has no checkout: with a runner the command needs none; without one it says so.
    nowhere = tmp_path / "no-checkout"
    nowhere.mkdir()
    assert workspace(nowhere, tmp_path / "agent", "--runner", runner_address, "--token", "alice-token") == 0
    assert tree(tmp_path / "agent") == local
    assert workspace(nowhere, tmp_path / "lost") != 0 and not (tmp_path / "lost").exists()


def test_a_non_empty_folder_is_refused_unless_forced(
    add_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ws"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert workspace(add_repo, out) == cli.EXIT_USAGE
    error = capsys.readouterr().err
    assert "is not empty" in error and "--force" in error
    assert tree(out) == {"notes.txt": b"mine"}
    assert workspace(add_repo, out, "--force") == 0
    assert sorted(tree(out)) == ["TASK.md", "candidate/kernel.py", "notes.txt"]


def test_the_sdk_refuses_a_non_empty_folder(tmp_path: Path, runner_address: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "x").write_text("x")
    with Client(runner_address, "alice-token") as client, pytest.raises(FolderNotEmpty):
        client.workspace(ADD, tmp_path / "ws")


def test_an_unknown_task_is_refused(add_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ws"
    code = cli.main(["--repo-root", str(add_repo), "workspace", "tasks/triton2triton/nope", str(out)])
    assert code == cli.EXIT_CODES[UnknownTask]
    assert "no task at 'tasks/triton2triton/nope'" in capsys.readouterr().err
    assert not out.exists()


def test_an_unknown_task_is_refused_through_the_runner(
    add_repo: Path, tmp_path: Path, runner_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ws"
    argv = ["workspace", "tasks/triton2triton/nope", str(out), "--runner", runner_address, "--token", "alice-token"]
    assert cli.main(["--repo-root", str(add_repo), *argv]) == cli.EXIT_CODES[UnknownTask]
    assert "nope" in capsys.readouterr().err
    assert not out.exists()
