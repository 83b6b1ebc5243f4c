"""The local executor: the harness's own child on this host, pinned to one device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.executors.local import LocalExecutor
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.task.task import Task


def test_the_device_is_pinned_and_the_rest_of_the_settings_kept(
    scale_repo: Path, scale_task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []

    def fake(
        task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings, standby: Any, cpus: Any
    ) -> HarnessResult:
        seen.append((task, candidate, repo_root, settings, cpus))
        return HarnessResult(status="PASSED", compiled=True, correct=True)

    monkeypatch.setattr("arena.harness.launch.run_harness", fake)
    settings = HarnessSettings(device=0, trials=7)
    assert LocalExecutor(device=2).run(scale_task, None, scale_repo, settings).status == "PASSED"
    assert seen[-1][3] == HarnessSettings(device=2, trials=7)
    LocalExecutor().run(scale_task, None, scale_repo, settings)
    assert seen[-1][3] is settings and seen[-1][4] is None  # no pin: the lane's device stands, any CPU
    # Each GPU's own CPUs (runner/devices.py lane_cpus) go with a run on it; a CPU-backend run has none.
    lanes = LocalExecutor(cpu_sets={0: frozenset({0, 1}), 1: frozenset({2, 3})})
    lanes.run(scale_task, None, scale_repo, HarnessSettings(device=1))
    assert seen[-1][4] == {2, 3}
    lanes.run(scale_task, None, scale_repo, HarnessSettings(device=1, backend="cpu"))
    assert seen[-1][4] is None


def test_a_real_run_on_cpu(scale_repo: Path, scale_task: Task, wrong_candidate: Candidate) -> None:
    settings = HarnessSettings(backend="cpu", timeout_s=240, cases=("small",))
    result = LocalExecutor(device=0).run(scale_task, wrong_candidate, scale_repo, settings)
    assert result.compiled and not result.correct and result.status == "INCORRECT", result.errors


def test_provenance_names_the_executor_and_keeps_the_hosts_environment() -> None:
    host = Environment(fingerprint="h", backend="cuda", versions={"torch": "2.11"})
    local = LocalExecutor(device=1)
    assert local.describe() == {"executor": "local", "device": "1"}
    assert local.environment(host) == host  # the same cache entries as `arena evaluate` on this host


def test_prepare_starts_the_threads_first_child_and_close_stops_it() -> None:
    executor = LocalExecutor()
    executor.prepare("cpu")
    (standby,) = executor._standbys.values()
    waiting = standby._next
    assert waiting is not None and waiting.ready()
    executor.prepare("cpu")  # already waiting: no second child
    assert standby._next is waiting
    executor.close()
    assert waiting.process.returncode is not None and not waiting.work.exists()
    assert LocalExecutor(standby=False)._standby() is None
