"""Executors plug into the runner: each job's evaluation runs through the executor, with the
executor's environment (so its provenance and cache keys are its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Environment, Evaluation, Status
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity
from arena.runner.executors.base import Executor
from arena.runner.executors.local import LocalExecutor
from arena.runner.runner import Runner
from arena.task.task import Task

OPS = Identity("ops", operator=True)


def test_the_runner_evaluates_through_its_executor(
    scale_repo: Path, scale_task: Task, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    def fake_evaluate(task, candidate, repo_root, settings, store, **options):  # type: ignore[no-untyped-def]
        seen.append(options)
        return Evaluation(
            "e1", task.address, "t", "c", Status.PASSED, True, True, environment=options["environment"]
        )

    executor: Executor = LocalExecutor(device=4)
    runner = Runner(
        scale_repo,
        tmp_path / "state",
        fake_evaluate,
        settings=HarnessSettings(backend="cpu"),
        tasks=(scale_task,),
        durable=False,
        executor=executor,
    ).start()
    try:
        candidate = Candidate(
            scale_task.address, {"kernel.py": (scale_repo / scale_task.task_dir / "kernel.py").read_bytes()}
        )
        steps = list(runner.evaluate(OPS, "", candidate))
    finally:
        runner.stop()
    assert steps[-1].stage == "done", steps
    assert seen[0]["runner"] == executor.run
    environment: Environment = seen[0]["environment"]
    assert "executor" not in environment.versions and environment.fingerprint  # local: the host as probed
