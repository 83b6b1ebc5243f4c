"""The start-up sweep of killed runs' folders: only folders whose owner is gone, never a live
process's; and the harness parent's run folders are private (0700)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import pytest

from arena.runner import run_folders
from arena.runner.run_folders import owner_alive, process_start_time, sweep_run_folders


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def run_folder(root: Path, pid: int, suffix: str = "abc123_x") -> Path:
    folder = root / f"arena-run-{pid}-{suffix}"
    (folder / "work" / "deep").mkdir(parents=True)
    (folder / "work" / "deep" / "kernel.py").write_text("x = 1\n")
    return folder


def test_a_folder_whose_owner_is_gone_is_removed(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, dead_pid())
    assert sweep_run_folders(tmp_path) == [folder]
    assert not folder.exists()


def test_a_folder_of_a_live_process_is_kept(tmp_path: Path) -> None:
    mine = run_folder(tmp_path, os.getpid())
    # Alive until the test lets it go: it waits for its stdin to close, however long the sweep takes.
    waiter = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        theirs = run_folder(tmp_path, waiter.pid)
        assert sweep_run_folders(tmp_path) == []
        assert mine.is_dir() and theirs.is_dir()
    finally:
        waiter.kill()
        waiter.wait()
    assert sweep_run_folders(tmp_path) == [theirs]  # once it is gone, so is its folder


def test_a_reused_process_id_does_not_keep_a_dead_runners_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = run_folder(tmp_path, os.getpid())
    # The process now holding the id started after the folder was made: not its owner.
    monkeypatch.setattr(run_folders, "process_start_time", lambda pid: time.time() + 60)
    assert sweep_run_folders(tmp_path) == [folder]


def test_folders_without_an_owner_or_not_ours_are_left_alone(tmp_path: Path) -> None:
    gone = dead_pid()
    unowned = tmp_path / "arena-run-k2j4h5l6"  # no pid in the name: its owner cannot be told
    unowned.mkdir()
    other_prefix = run_folder(tmp_path, gone).rename(tmp_path / f"arena-docker-{gone}-abc")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    link = tmp_path / f"arena-run-{gone}-link"
    link.symlink_to(target)
    plain_file = tmp_path / f"arena-run-{gone}-file"
    plain_file.write_text("not a folder")
    assert sweep_run_folders(tmp_path) == []
    assert unowned.is_dir() and other_prefix.is_dir() and link.is_symlink() and plain_file.is_file()
    assert (target / "keep.txt").read_text() == "keep"


def test_folders_a_candidate_made_unreadable_are_removed_too(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, dead_pid())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (folder / "work" / "escape").symlink_to(outside)
    os.chmod(folder / "work" / "deep", 0)
    os.chmod(folder / "work", stat.S_IRUSR | stat.S_IXUSR)
    assert sweep_run_folders(tmp_path) == [folder]
    assert not folder.exists()
    assert (outside / "keep.txt").read_text() == "keep"  # a symlink inside was not followed


def test_the_start_time_of_a_process_is_read_from_proc() -> None:
    if not Path("/proc/self/stat").is_file():
        pytest.skip("no /proc on this system")
    started = process_start_time(os.getpid())
    assert started is not None and time.time() - 24 * 3600 * 365 < started <= time.time() + 1
    assert owner_alive(os.getpid(), folder_changed_at=time.time())
    assert not owner_alive(os.getpid(), folder_changed_at=started - 3600)  # made before we started


def stop_before_the_child_starts(monkeypatch: pytest.MonkeyPatch, popen: Callable[..., None], tmp_path: Path) -> None:
    """launch.Child() lays out its folder, then calls `popen` instead of starting a process."""
    from arena.harness import launch

    monkeypatch.setattr(launch, "sandbox_tool", lambda: "")
    monkeypatch.setattr(launch, "trusted_root", lambda: tmp_path / "kernels")
    # No byte code compiled first: where none is cached yet (a fresh machine), that compile is a
    # Popen of its own, in a folder of its own, which `popen` would take for the child's.
    monkeypatch.setattr(launch, "bytecode_folder", lambda measurement: None)
    monkeypatch.setattr(launch.subprocess, "Popen", popen)


def test_the_harness_parent_makes_its_run_folders_private(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from arena.harness import launch

    seen: dict[str, object] = {}

    def no_process(argv: list[str], **options: object) -> None:
        folder = Path(str(options["cwd"])).parent
        seen["name"], seen["mode"] = folder.name, stat.S_IMODE(folder.stat().st_mode)
        raise OSError("no child in this test")

    stop_before_the_child_starts(monkeypatch, no_process, tmp_path)
    with pytest.raises(OSError, match="no child in this test"):
        launch.Child()
    assert str(seen["name"]).startswith(run_folders.RUN_FOLDER_PREFIX)
    assert seen["mode"] == 0o700


def test_the_harness_records_the_owner_of_each_run_folder_in_its_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from arena.harness import launch

    names: list[str] = []

    def no_process(argv: list[str], **options: object) -> None:
        names.append(Path(str(options["cwd"])).parent.name)
        raise OSError("no child in this test")

    stop_before_the_child_starts(monkeypatch, no_process, tmp_path)
    with pytest.raises(OSError):
        launch.Child()
    match = run_folders.OWNED_RUN_FOLDER.fullmatch(names[0])
    assert match is not None and int(match["pid"]) == os.getpid()


def test_the_default_root_is_the_temporary_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = run_folder(tmp_path, dead_pid())
    assert sweep_run_folders() == [folder]
