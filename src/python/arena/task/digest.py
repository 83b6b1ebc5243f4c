"""The task digest: a hash of everything in a task that can change a candidate's score.

Covered: the fields in SCORED_FIELDS (as canonical JSON) and the bytes of every file the task
names (Task.all_files: baseline, sources, entry and reference files) with their paths.
Left out, because they change no candidate's score: address, name, task_dir, description,
signature, budgets, exemplars, the wrong candidate and skip. docs/task-format.md "The task
digest" lists the same; keep the two in step.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from arena.task.codec import task_to_dict
from arena.task.task import Task

SCORED_FIELDS = (
    "category", "entry", "reference", "inputs", "outputs", "scalars", "abi", "cases",
    "tolerances", "forbidden", "flops", "bytes", "editable", "build", "bench", "archs", "timeout",
)  # fmt: skip
# Scored fields added after the first digests: left out of the document while unset, so every
# task that does not use them keeps its digest (and its cached scores).
OMITTED_WHEN_UNSET = ("timeout",)
# Bump when the encoding below changes, so old digests can never match new ones.
_VERSION = "arena-task-v1"


def task_digest(task: Task, repo_root: Path) -> str:
    """Hex sha256 of the task's scored fields and named files (read from repo_root/task_dir)."""
    fields = task_to_dict(task)
    task_dir = repo_root / task.task_dir
    document = {
        "version": _VERSION,
        "fields": {
            name: fields[name] for name in SCORED_FIELDS if not (name in OMITTED_WHEN_UNSET and fields[name] is None)
        },
        "files": {name: hashlib.sha256((task_dir / name).read_bytes()).hexdigest() for name in task.all_files()},
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
