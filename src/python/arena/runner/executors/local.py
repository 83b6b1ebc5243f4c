"""The local executor: the harness's own fresh child process on this host, on one GPU."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Environment
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.runner.executors.base import EXECUTOR_VERSION_KEY, with_environment
from arena.task.task import Task


@dataclass(frozen=True)
class LocalExecutor:
    device: int | None = None  # the GPU index every run is pinned to; None: settings.device (the lane's)

    def run(
        self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings
    ) -> HarnessResult:
        from arena.harness.launch import run_harness  # the trusted parent; imported only when used

        if self.device is not None:
            settings = replace(settings, device=self.device)
        return run_harness(task, candidate, repo_root, settings)

    def describe(self) -> dict[str, str]:
        described = {"executor": "local"}
        if self.device is not None:
            described["device"] = str(self.device)
        return described

    def environment(self, base: Environment) -> Environment:
        """This host as probed, marked local (the versions are this host's packages)."""
        return with_environment(base, {**base.versions, EXECUTOR_VERSION_KEY: "local"})
