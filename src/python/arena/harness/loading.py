"""Building and loading one side's code (baseline or candidate) as a Kernel the harness can call.

The judge loads the baseline and the reference with it; the candidate worker loads the candidate.
A HIP side is built first (`build_side`) and loaded separately (`load_side`), because loading runs
the library's static constructors and the judge checks the built library's symbols in between.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.task.task import Task

LOG_LIMIT = 16 * 1024


class BuildFailed(Exception):
    """The side does not build; the message holds the (cut) build log."""


def cut(text: str) -> str:
    return text if len(text) <= LOG_LIMIT else "...\n" + text[-LOG_LIMIT:]


def library_path(work: Path, label: str) -> Path:
    return work / f"{label}.so"


def build_side(task: Task, directory: Path, work: Path, label: str, backend: str, arch: str) -> None:
    """Compile a HIP side into work/<label>.so, or run a repository's build; BuildFailed on failure."""
    from arena.harness.backends.hip import compile_hip
    from arena.harness.backends.repository import build_repository

    if task.category.is_hip:
        ok, log = compile_hip(directory / task.entry.file, library_path(work, label), backend, arch)
        if not ok:
            raise BuildFailed(f"{label} does not compile:\n{cut(log)}")
    elif task.category.value == "repository":
        ok, log = build_repository(directory, task.build)
        if not ok:
            raise BuildFailed(f"{label} build failed:\n{cut(log)}")


def load_side(task: Task, directory: Path, work: Path, label: str) -> Any:
    """The built side as a Kernel: a HIP library's launcher, or the Python entry imported."""
    from arena.harness.backends.hip import load_hip_entry
    from arena.harness.backends.python_entry import load_python_entry

    if task.category.is_hip:
        return load_hip_entry(library_path(work, label), task.entry.symbol, task, label)
    return load_python_entry(directory, task.entry, label)
