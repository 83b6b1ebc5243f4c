"""arena's default folders (arena.runner.folders: the runner's state, agents' workspaces, the score
cache) under each test's own tmp_path, so no test writes to or reads from the user's
~/.local/state/arena or ~/.cache/arena, nor sees another test's scores there."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_STATE_HOME and XDG_CACHE_HOME under tmp_path/xdg; returns that folder."""
    root = tmp_path / "xdg"
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
    return root
