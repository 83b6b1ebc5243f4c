"""The one-call runner fixture for the harness tests; the tasks live in arena_testing.harness_tasks."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest

from arena.candidate.candidate import Candidate
from arena.harness.launch import run_harness
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.task.task import Task
from arena_testing.control_groups import groups  # noqa: F401 (a fixture: limits_test)
from arena_testing.harness_tasks import build_task

Runner = Callable[..., HarnessResult]


@pytest.fixture
def run_candidate(tmp_path: Path) -> Runner:
    """run_candidate(source | None, timeout_s=60, cpus=None, **settings): the harness's verdict on
    kernel.py (`cpus`: the lane's CPUs the child is kept to)."""

    def run(
        source: str | None,
        *,
        hip: bool = False,
        task: Task | None = None,
        cpus: frozenset[int] | None = None,
        **settings: object,
    ) -> HarnessResult:
        task = task or build_task(tmp_path, hip=hip)
        candidate = (
            None if source is None else Candidate(task.address, {task.entry.file: textwrap.dedent(source).encode()})
        )
        options = {"backend": "cpu", "timeout_s": 120, **settings}
        return run_harness(task, candidate, tmp_path, HarnessSettings(**options), cpus=cpus)  # type: ignore[arg-type]

    return run


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU backend sets TRITON_INTERPRET for the process; this puts it back after the test."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
