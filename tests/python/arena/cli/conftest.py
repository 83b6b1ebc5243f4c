"""Fixtures for the evaluating commands: the vector-add task (arena_testing.add_task) and a stand-in
for run_harness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.harness.result import CaseOutcome, HarnessResult, StageLog
from arena_testing.add_task import ADD_FILES, write_add_task
from arena_testing.xdg import private_xdg  # noqa: F401 (autouse: default folders under tmp_path)


@pytest.fixture
def add_repo(tmp_path: Path) -> Path:
    """A repository root holding the vector-add task at tasks/triton2triton/add."""
    return write_add_task(tmp_path / "repo")


def fake_result(task, candidate, repo_root, settings) -> HarnessResult:  # type: ignore[no-untyped-def]
    """Correct on every requested case; the candidate (None: the baseline) 2x faster unless None."""
    rng = np.random.default_rng(0)
    ratio = 1.0 if candidate is None else 2.0
    cases = []
    for case in task.cases:
        if settings.cases and case.name not in settings.cases:
            continue
        timed = case.timed and not settings.check_only
        base = tuple(float(v) for v in rng.normal(100.0, 1.0, 50)) if timed else ()
        cand = tuple(float(v) for v in rng.normal(100.0 / ratio, 1.0 / ratio, 50)) if timed else ()
        cases.append(CaseOutcome(case.name, correct=True, timed=case.timed, baseline_us=base, candidate_us=cand))
    return HarnessResult(
        status="PASSED",
        compiled=True,
        correct=True,
        stages=(StageLog("compile", True, 0.1),),
        cases=tuple(cases),
        timings_available=not settings.check_only,
    )


@pytest.fixture
def fake_harness(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Replaces run_harness for the commands (evaluate and a runner's local executor both look it up
    in arena.harness.launch when they call it); returns the (candidate, settings) it was called with."""
    calls: list[Any] = []

    def runner(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        calls.append((candidate, settings))
        return fake_result(task, candidate, repo_root, settings)

    monkeypatch.setattr("arena.harness.launch.run_harness", runner)
    monkeypatch.setattr("arena.harness.launch.Standby", NoChild)
    return calls


class NoChild:
    """launch.Standby's stand-in beside the stand-in run_harness: `arena evaluate` starts its child
    ahead, and these tests want none started. `events` records what the command asked of it."""

    events: list[str] = []

    def __init__(self, again: bool = True) -> None:
        self.events.append(f"made again={again}")

    def warm(self, cpus: frozenset[int] | None = None) -> None:
        self.events.append("warm")

    def close(self) -> None:
        self.events.append("close")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def cpu_machine(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every probe sees a machine without a GPU, whatever runs the tests."""
    from dataclasses import replace

    from arena.environment.environment import Environment, fingerprint_environment

    cpu = Environment(backend="cpu-interpreter", versions={"python": "test"})
    cpu = replace(cpu, fingerprint=fingerprint_environment(cpu))
    monkeypatch.setattr("arena.cli.evaluate.probe_environment", lambda: cpu)
    monkeypatch.setattr("arena.evaluation.evaluate.probe_environment", lambda: cpu)
    return cpu


@pytest.fixture
def gpu_machine(monkeypatch: pytest.MonkeyPatch) -> Any:
    from arena.environment.environment import Environment

    gpu = Environment(fingerprint="g" * 64, backend="cuda", gpu_name="NVIDIA H200", gpu_arch="sm_90")
    monkeypatch.setattr("arena.cli.evaluate.probe_environment", lambda: gpu)
    monkeypatch.setattr("arena.evaluation.evaluate.probe_environment", lambda: gpu)
    return gpu


@pytest.fixture
def write_add() -> Any:
    """write_add_task itself, for tests that need a changed task (tests never import conftest)."""
    return write_add_task


@pytest.fixture
def add_files() -> dict[str, str]:
    return dict(ADD_FILES)


@pytest.fixture
def harness_result() -> Any:
    """fake_result itself: (task, candidate, repo_root, settings) -> a correct HarnessResult."""
    return fake_result
