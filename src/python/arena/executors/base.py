"""Where the harness runs: one small interface, three places (this host, the pinned image, a pool).

An executor takes the place of arena.harness.launch.run_harness in arena.evaluation.evaluate
(its `runner=` argument): same arguments, same HarnessResult. An executor may also define
`prepare(lane)`, which the runner calls on each lane's thread as the lane starts, and `close()`,
called when the runner stops (the local executor starts and stops its waiting children there).
It also says what it is, for provenance (`describe`), and how it changes the environment an
evaluation records and the score cache is keyed by (`environment`): an evaluation in the pinned image is not the same
measurement as one on the bare host, so it must not share its cache entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.errors import ArenaError
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.task.task import Task

# The key in Environment.versions that names the executor (so it takes part in the fingerprint).
EXECUTOR_VERSION_KEY = "executor"


class ExecutorError(ArenaError):
    """The executor cannot run anything: an unresolved image, no docker, an unreachable pool."""


class Executor(Protocol):
    def run(self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings) -> HarnessResult:
        """Compile, check and time `candidate` (None: the baseline) somewhere; never raises for
        a broken candidate (that is a status), raises ExecutorError when it cannot run at all."""
        ...

    def describe(self) -> dict[str, str]:
        """What ran the evaluation, for provenance: always `executor` (local|docker|remote)."""
        ...

    def isolation(self) -> str:
        """What keeps candidate code away from the runner here ("" when nothing does): the OS
        sandbox's name, "docker", the remote pool's."""
        ...

    def environment(self, base: Environment) -> Environment:
        """The environment the evaluation records, from the parent's probe `base`, fingerprinted."""
        ...
