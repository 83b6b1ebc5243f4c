"""Building and loading one side's code (baseline or candidate) as a Kernel the harness can call.

The judge loads the baseline and the reference with it; the candidate worker loads the candidate.
A HIP side is built first (`build_side`) and loaded separately (`load_side`), because loading runs
the library's static constructors and the judge checks the built library's symbols in between.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.task.task import Task

if TYPE_CHECKING:
    from arena.harness.backends.kernel import Kernel

LOG_LIMIT = 16 * 1024


class BuildFailed(Exception):
    """The side does not build; the message holds the (cut) build log."""


def cut(text: str) -> str:
    return text if len(text) <= LOG_LIMIT else "...\n" + text[-LOG_LIMIT:]


def library_path(work: Path, label: str) -> Path:
    return work / f"{label}.so"


def build_side(task: Task, directory: Path, work: Path, label: str, backend: str, arch: str) -> str:
    """Compile a HIP side into work/<label>.so, or run a repository's build; BuildFailed on failure.
    How a HIP library came ("compiled", "from the trusted builds"), else ''."""
    from arena.harness.backends.hip import compile_hip
    from arena.harness.backends.repository import build_repository
    from arena.harness.trusted_builds import fetch, stash

    if task.category.is_hip:
        library = library_path(work, label)
        # Only the judge's own build of the baseline is looked up and kept (trusted_builds.py).
        key = trusted_build_key(task, directory, label, backend, arch)
        if key and fetch(key, library):
            return "from the trusted builds"
        ok, log = compile_hip(directory / task.entry.file, library, backend, arch)
        if not ok:
            raise BuildFailed(f"{label} does not compile:\n{cut(log)}")
        if key:
            stash(key, library, work)
        return "compiled"
    elif task.category.value == "repository":
        ok, log = build_repository(directory, task.build)
        if not ok:
            raise BuildFailed(f"{label} build failed:\n{cut(log)}")
    return ""


def trusted_build_key(task: Task, directory: Path, label: str, backend: str, arch: str) -> str:
    """The baseline's build key where the judge may reuse a trusted build, else ''."""
    from arena.harness.trusted_builds import build_key, compiler_version

    if label != "baseline" or not task.category.is_hip or not compiler_version(backend):
        return ""
    return build_key(directory, task.entry.file, backend, arch)


def load_side(task: Task, directory: Path, work: Path, label: str) -> Kernel:
    """The built side as a Kernel: a HIP library's launcher, or the Python entry imported."""
    from arena.harness.backends.hip import load_hip_entry
    from arena.harness.backends.python_entry import load_python_entry

    if task.category.is_hip:
        return load_hip_entry(library_path(work, label), task.entry.symbol, task, label)
    return load_python_entry(directory, task.entry, label)
