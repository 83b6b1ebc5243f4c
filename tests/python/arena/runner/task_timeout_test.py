"""A task's `timeout` field is the harness timeout of the runner's jobs for that task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.harness.settings import HarnessSettings
from arena.runner.auth import Identity


def test_a_task_timeout_replaces_the_runners_for_that_task(repo: Path, make_runner: Any, kit: Any) -> None:
    softmax = repo / "tasks" / "triton2triton" / "softmax" / "BUILD"
    softmax.write_text(softmax.read_text().replace("    iterations=", "    timeout=45,\n    iterations="))
    seen: list[float] = []

    def evaluate(task: Any, candidate: Any, repo_root: Path, settings: HarnessSettings, store: Any) -> Any:
        seen.append(settings.timeout_s)
        return kit.fake_evaluation(task, candidate)

    runner = make_runner(repo, evaluate, settings=HarnessSettings(timeout_s=600))
    list(runner.evaluate(Identity("ops", operator=True), "", kit.candidate("speedup=2")))
    assert seen == [45.0]
