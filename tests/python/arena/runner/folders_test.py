"""arena's default folders (arena.runner.folders): the XDG base directories, outside any checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.runner import folders


def test_the_defaults_follow_the_xdg_base_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "ARENA_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    state, cache = tmp_path / "home" / ".local" / "state" / "arena", tmp_path / "home" / ".cache" / "arena"
    assert (folders.state_root(), folders.cache_root()) == (state, cache)
    assert folders.runner_state() == state / "runner" and folders.agent_workspaces() == state / "workspaces"
    assert folders.score_cache_folder() == cache
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert folders.runner_state() == tmp_path / "s" / "arena" / "runner"
    assert folders.score_cache_folder() == tmp_path / "c" / "arena"
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "scores"))  # the score cache's own override
    assert folders.score_cache_folder() == tmp_path / "scores" and folders.cache_root() == tmp_path / "c" / "arena"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # the spec says to ignore a relative path
    assert folders.state_root() == state
