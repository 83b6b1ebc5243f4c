"""The rules a candidate's files must follow: inside the task's allow-list, plain, and small."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Iterable

from arena.errors import InvalidCandidate
from arena.task.paths import is_allowed
from arena.task.task import Task

MAX_FILE_BYTES = 1 << 20  # 1 MiB: kernels are source files, not data
MAX_TOTAL_BYTES = 4 << 20  # 4 MiB for all of a candidate's files together
# Folders tools leave behind (byte-code caches); skipped, never part of a candidate.
IGNORED_FOLDERS = frozenset({"__pycache__"})
# Compiled forms Python would run instead of, or beside, the source: a candidate is source (the
# static check reads it and a reviewer reads what ran). An unchecked-hash .pyc is imported
# whatever its .py says; an extension module is native code the static check never sees.
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")


def check_candidate_path(task: Task, name: str) -> str:
    """`name` (relative, POSIX) is a normalised path inside the task's allow-list."""
    pure = PurePosixPath(name)
    if not name or pure.is_absolute() or "\\" in name or ".." in pure.parts or str(pure) != name:
        raise InvalidCandidate(f"{name!r} is not a plain relative path")
    if IGNORED_FOLDERS.intersection(pure.parts) or pure.suffix in COMPILED_SUFFIXES:
        raise InvalidCandidate(f"{name!r} is compiled code or a byte-code cache; a candidate is source")
    if not is_allowed(name, task.editable):
        raise InvalidCandidate(f"{name!r} is outside the editable files of {task.address} ({', '.join(task.editable)})")
    return name


def check_file_tree(task: Task, names: Iterable[str]) -> None:
    """No path is both a file and a folder once the candidate lies over the task's files:
    `kernel.py` with `kernel.py/evil.py`, `kernel.py/evil.py` where the task has a file
    `kernel.py`, or a file `lib` where the task has `lib/util.py`. Such a map could never be laid
    out, so it is refused where it enters rather than failing inside the runner."""
    candidate = set(names)
    files = candidate | set(task.all_files())
    for name in sorted(candidate):
        for parent in _folders_above(name):
            if parent in files:
                owner = "the candidate" if parent in candidate else f"the task {task.address}"
                raise InvalidCandidate(f"{name!r} lies below {parent!r}, which is a file of {owner}")
    task_folders = {parent: name for name in task.all_files() for parent in _folders_above(name)}
    for name in sorted(candidate):
        if name in task_folders:
            raise InvalidCandidate(
                f"{name!r} is a folder of the task {task.address} (it holds {task_folders[name]!r}), not a file"
            )


def _folders_above(name: str) -> list[str]:
    """ "a/b/c.py" -> ["a/b", "a"]."""
    return [str(parent) for parent in PurePosixPath(name).parents if str(parent) != "."]


def check_candidate_sizes(files: dict[str, bytes]) -> None:
    """At least one file, each at most MAX_FILE_BYTES, all together at most MAX_TOTAL_BYTES."""
    if not files:
        raise InvalidCandidate("the candidate has no files")
    for name, content in files.items():
        if len(content) > MAX_FILE_BYTES:
            raise InvalidCandidate(f"{name!r} has {len(content)} bytes; the limit is {MAX_FILE_BYTES}")
    total = sum(len(content) for content in files.values())
    if total > MAX_TOTAL_BYTES:
        raise InvalidCandidate(f"the candidate has {total} bytes; the limit is {MAX_TOTAL_BYTES}")
