"""The sources a process measures with are pinned at its start and checked before every job."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.harness import launch, version
from arena.harness.settings import HarnessSettings


@pytest.fixture
def fresh_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(version, "_pinned", [])


def test_the_pin_is_taken_once_and_holds(fresh_pin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    first = version.pin_sources()
    assert first == version.trusted_digest() and version.pin_sources() == first
    version.check_sources()  # unchanged: nothing to say
    monkeypatch.setattr(version, "trusted_digest", lambda: "edited after the start")
    assert version.pin_sources() == first  # a later pin does not move it
    with pytest.raises(version.SourcesChanged, match="changed on disk since this process started"):
        version.check_sources()


def test_no_job_starts_once_the_sources_changed(fresh_pin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # A daemon left by an earlier candidate edits the harness between jobs: the next job refuses
    # before anything is laid out or started (a system fault, never a cached verdict).
    version.pin_sources()
    monkeypatch.setattr(version, "trusted_digest", lambda: "edited between jobs")
    started = []
    monkeypatch.setattr(launch, "Child", lambda: started.append(1))
    with pytest.raises(version.SourcesChanged):
        launch.run_harness(None, None, Path("."), HarnessSettings())  # type: ignore[arg-type]
    assert started == []


def test_packages_digest_sees_each_package(tmp_path: Path) -> None:
    for package in ("harness", "task"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "a.py").write_text("x = 1\n")
    before = version.packages_digest(("harness", "task"), tmp_path)
    (tmp_path / "task" / "a.py").write_text("x = 2\n")
    assert version.packages_digest(("harness", "task"), tmp_path) != before
    assert version.packages_digest(("harness",), tmp_path) != version.packages_digest(("task",), tmp_path)
