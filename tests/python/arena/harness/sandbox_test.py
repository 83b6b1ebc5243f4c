"""The sandbox's command line and the folders it shows (no child is started here; the planted
tests in cheats/ start them: cheat_escape_sandbox_test.py, cheat_read_the_checkout_test.py)."""

import os
from pathlib import Path

import pytest

from arena.errors import UnusableEnvironment
from arena.harness import sandbox


def _site(root: Path) -> Path:
    folder = root / "lib" / "site-packages"
    (folder / "torch").mkdir(parents=True)
    return folder


@pytest.mark.parametrize(
    "plant",
    [
        lambda root: (root / "pants.toml").write_text(""),
        lambda root: (root / ".arena" / "runner").mkdir(parents=True),
        lambda root: (root / "scores.sqlite").write_bytes(b""),
        lambda root: (root / "scores.key").write_bytes(b"k"),
        lambda root: (root / "runner.sqlite").write_bytes(b""),
        lambda root: ((root / "runner").mkdir(), (root / "runner" / "runner.sqlite").write_bytes(b"")),
        lambda root: ((root / "tasks" / "t" / "add").mkdir(parents=True), (root / "tasks" / "t" / "add" / "BUILD").write_text("")),
    ],
    ids=["checkout", "dot-arena", "score-cache", "cache-key", "runner-database", "state-folder", "task-tree"],
)
def test_a_folder_holding_a_checkout_or_state_is_refused(tmp_path: Path, plant) -> None:
    folder = _site(tmp_path)
    assert sandbox.exposed_state(folder) == ""
    sandbox.sandboxed(["true"], tmp_path / "job", read_only=(folder,))  # shown: nothing there
    plant(folder)
    assert sandbox.exposed_state(folder) != ""
    with pytest.raises(UnusableEnvironment, match=str(folder)):
        sandbox.sandboxed(["true"], tmp_path / "job", read_only=(folder,))


def test_a_tasks_folder_without_declarations_is_no_checkout(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "celery").mkdir(parents=True)  # a package that happens to be named so
    (tmp_path / "tasks" / "__init__.py").write_text("")
    assert sandbox.exposed_state(tmp_path) == ""


def test_the_repository_anywhere_below_a_folder_shown_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "deep" / "down" / "repo"
    repo.mkdir(parents=True)
    sandbox.refuse_exposed([str(tmp_path / "other")], hidden=[repo])
    with pytest.raises(UnusableEnvironment, match="repo"):
        sandbox.refuse_exposed([str(tmp_path)], hidden=[repo])
    with pytest.raises(UnusableEnvironment):
        sandbox.sandboxed(["true"], tmp_path / "job", read_only=(tmp_path / "deep",), hidden=(repo,))


def test_only_the_folders_asked_for_and_the_system_are_shown(tmp_path: Path, monkeypatch) -> None:
    site = _site(tmp_path)
    monkeypatch.chdir(tmp_path)  # the working folder is never shown for being one
    argv = sandbox.sandboxed(["python3", "-m", "x"], tmp_path / "job", read_only=(site,))
    shown = [argv[i + 2] for i, op in enumerate(argv) if op == "--ro-bind"]
    assert str(site) in shown and str(tmp_path) not in shown
    assert set(shown) - {str(site), "/sys", *(str(tmp_path / "job" / n) for n in sandbox.TRUSTED_FOLDERS)} <= {
        os.path.realpath(f) for f in sandbox.SYSTEM
    } | set(sandbox.SYSTEM)
