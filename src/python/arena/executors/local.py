"""The local executor: the harness's own fresh child process on this host, on one GPU.

Each thread that runs evaluations (a runner lane) keeps a harness child started ahead of its
next job (arena.harness.launch.Standby), so a job does not wait for the child's `import torch`;
the runner has each lane start its first one when the lane starts (prepare).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.environment.probe import sandbox_tool
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.task.task import Task


@dataclass(frozen=True)
class LocalExecutor:
    device: int | None = None  # the GPU index every run is pinned to; None: settings.device (the lane's)
    standby: bool = True  # keep a child started ahead of each thread's next job
    # Each GPU's own CPUs (arena.runner.devices.lane_cpus): a run on that GPU is kept to them, so
    # lanes do not slow each other's timing. Empty: children run wherever this process may.
    cpu_sets: Mapping[int, frozenset[int]] = field(default_factory=dict)
    _standbys: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def run(self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings) -> HarnessResult:
        from arena.harness.launch import run_harness  # the trusted parent; imported only when used

        if self.device is not None:
            settings = replace(settings, device=self.device)
        cpus = self.cpu_sets.get(settings.device) if settings.backend != "cpu" else None
        return run_harness(task, candidate, repo_root, settings, standby=self._standby(), cpus=cpus)

    def prepare(self, lane: str) -> None:
        """Start the calling lane thread's first child now (on the lane's CPUs), so its first job
        does not wait for it."""
        standby = self._standby()
        if standby is not None:
            standby.warm(self.cpu_sets.get(int(lane)) if lane.isdigit() else None)

    def close(self) -> None:
        """Stop every thread's waiting child (they also die with the thread that started them)."""
        with self._lock:
            standbys = list(self._standbys.values())
            self._standbys.clear()
        for standby in standbys:
            standby.close()

    def _standby(self) -> Any:
        if not self.standby:
            return None
        from arena.harness.launch import Standby

        with self._lock:
            return self._standbys.setdefault(threading.get_ident(), Standby())

    def describe(self) -> dict[str, str]:
        described = {"executor": "local"}
        if self.device is not None:
            described["device"] = str(self.device)
        return described

    def isolation(self) -> str:
        """The OS sandbox each child runs in (harness/sandbox.py); "" where this machine has none."""
        return sandbox_tool()

    def environment(self, base: Environment) -> Environment:
        """This host as probed, unchanged: the same measurement as `arena evaluate` without a
        runner makes, so the two share score-cache entries. Executors that run elsewhere mark it."""
        return base
