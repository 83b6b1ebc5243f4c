"""Executors plug into the runner: each job's evaluation runs through the executor, with the
executor's environment (so its provenance and cache keys are its own)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.evaluation.evaluation import Evaluation, Status
from arena.executors.base import Executor
from arena.executors.local import LocalExecutor
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.runner import Runner
from arena.task.task import Task
from arena_testing.waiting import wait_until

OPS = Identity("ops", operator=True)


def _runner(
    scale_repo: Path,
    scale_task: Task,
    state: Path,
    executor: Executor,
    evaluate: Any = None,
    lanes: tuple[str, ...] = ("cpu",),
) -> Runner:
    def passed(task, candidate, repo_root, settings, store, **options):  # type: ignore[no-untyped-def]
        return Evaluation("e1", task.address, "t", "c", Status.PASSED, True, True)

    return Runner(
        scale_repo,
        state,
        evaluate or passed,
        settings=HarnessSettings(backend="cpu"),
        tasks=(scale_task,),
        lanes=lanes,
        durable=False,
        executor=executor,
    ).start()


def _evaluate_baseline(runner: Runner, scale_repo: Path, scale_task: Task) -> list[Any]:
    """Every progress step of one evaluation of the task's own kernel."""
    candidate = Candidate(
        scale_task.address, {"kernel.py": (scale_repo / scale_task.task_dir / "kernel.py").read_bytes()}
    )
    try:
        return list(runner.evaluate(OPS, "", candidate))
    finally:
        runner.stop()


def test_the_runner_evaluates_through_its_executor(scale_repo: Path, scale_task: Task, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def fake_evaluate(task, candidate, repo_root, settings, store, **options):  # type: ignore[no-untyped-def]
        seen.append(options)
        return Evaluation("e1", task.address, "t", "c", Status.PASSED, True, True, environment=options["environment"])

    executor: Executor = LocalExecutor(device=4)
    runner = _runner(scale_repo, scale_task, tmp_path / "state", executor, fake_evaluate)
    steps = _evaluate_baseline(runner, scale_repo, scale_task)
    assert steps[-1].stage == "done", steps
    assert seen[0]["runner"] == executor.run
    environment: Environment = seen[0]["environment"]
    assert "executor" not in environment.versions and environment.fingerprint  # local: the host as probed


@dataclass(frozen=True)
class _PreparingExecutor(LocalExecutor):
    """Records which lane thread prepared; fails for the lanes named in `broken`."""

    standby: bool = False
    broken: tuple[str, ...] = ()
    prepared: list[tuple[str, str]] = field(default_factory=list)

    def prepare(self, lane: str) -> None:
        self.prepared.append((lane, threading.current_thread().name))
        if lane in self.broken:
            raise RuntimeError("no child today")


def test_each_lane_prepares_its_executor_on_its_own_thread_at_start(
    scale_repo: Path, scale_task: Task, tmp_path: Path
) -> None:
    executor = _PreparingExecutor()
    runner = _runner(scale_repo, scale_task, tmp_path / "state", executor, lanes=("0", "1"))
    try:
        wait_until(lambda: len(executor.prepared) >= 2, "both lanes to prepare")
    finally:
        runner.stop()
    assert sorted(executor.prepared) == [("0", "arena-lane-0"), ("1", "arena-lane-1")]


def test_a_lane_whose_preparation_fails_still_runs_jobs(scale_repo: Path, scale_task: Task, tmp_path: Path) -> None:
    executor = _PreparingExecutor(broken=("0",))
    runner = _runner(scale_repo, scale_task, tmp_path / "state", executor, lanes=("0",))
    steps = _evaluate_baseline(runner, scale_repo, scale_task)
    assert executor.prepared == [("0", "arena-lane-0")]
    assert steps[-1].stage == "done" and steps[-1].evaluation is not None
