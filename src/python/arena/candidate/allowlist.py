"""The rules a candidate's files must follow: inside the task's allow-list, plain, and small."""

from __future__ import annotations

from pathlib import PurePosixPath

from arena.errors import InvalidCandidate
from arena.task.paths import is_allowed
from arena.task.task import Task

MAX_FILE_BYTES = 1 << 20  # 1 MiB: kernels are source files, not data
MAX_TOTAL_BYTES = 4 << 20  # 4 MiB for all of a candidate's files together
# Folders tools leave behind (byte-code caches); skipped, never part of a candidate.
IGNORED_FOLDERS = frozenset({"__pycache__"})


def check_candidate_path(task: Task, name: str) -> str:
    """`name` (relative, POSIX) is a normalised path inside the task's allow-list."""
    pure = PurePosixPath(name)
    if not name or pure.is_absolute() or "\\" in name or ".." in pure.parts or str(pure) != name:
        raise InvalidCandidate(f"{name!r} is not a plain relative path")
    if not is_allowed(name, task.editable):
        raise InvalidCandidate(
            f"{name!r} is outside the editable files of {task.address} ({', '.join(task.editable)})"
        )
    return name


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
