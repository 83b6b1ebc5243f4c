"""Where `arena agent run` puts its workspaces when not told."""

from __future__ import annotations

from pathlib import Path

from arena.agents.orchestrator import fresh_workspaces


def test_every_run_of_a_configuration_gets_new_workspaces(tmp_path: Path) -> None:
    # A second `./pants run //agents:script` found the first one's workspace and refused to start.
    base = tmp_path / "workspaces" / "script-37da6d41e83b"
    first, second = fresh_workspaces(base), fresh_workspaces(base)
    assert first != second and first.parent == second.parent == base
    assert list(first.iterdir()) == [] and list(second.iterdir()) == []
