"""A test run twice: with the host's control groups where it allows them, and with none (the watch
alone, as on a host that allows none). Import `groups` into the test module to use it."""

from __future__ import annotations

from typing import Iterator

import pytest

from arena.limits import cgroups


@pytest.fixture(params=["auto", "off"])
def groups(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """ARENA_CGROUPS for this process's runner, "auto" (skipped where the host allows no group) or "off"."""
    monkeypatch.setenv(cgroups.VARIABLE, request.param)
    cgroups.found.cache_clear()
    if request.param == "auto" and cgroups.found().hierarchy is None:
        pytest.skip(f"no control groups here: {cgroups.found().reason}")
    yield request.param
    cgroups.found.cache_clear()
