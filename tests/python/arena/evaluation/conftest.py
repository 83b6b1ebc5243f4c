"""The vector-add task (arena_testing.add_task) in a temporary repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_testing.add_task import write_add_task


@pytest.fixture
def add_repo(tmp_path: Path) -> Path:
    """A repository root holding the vector-add task at tasks/triton2triton/add."""
    return write_add_task(tmp_path / "repo")
