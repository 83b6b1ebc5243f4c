"""The fake AgentKernelArena checkout in fixtures/, and a copy of it the tests may change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "checkout"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the fixture checkout (tests add or break tasks in it)."""
    return Path(shutil.copytree(FIXTURES, tmp_path / "checkout"))
