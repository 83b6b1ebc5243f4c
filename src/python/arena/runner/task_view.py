"""What an agent may see of a task: never exemplars, the wrong candidate, the reference or hidden cases."""

from __future__ import annotations

from pathlib import Path

from arena.candidate.allowlist import IGNORED_FOLDERS
from arena.runner.records import TaskView
from arena.task.task import Task


def view_task(task: Task, repo_root: Path, digest: str) -> TaskView:
    """The agent's view of `task`, with its baseline files read from repo_root/task_dir."""
    return TaskView(
        address=task.address,
        name=task.name,
        category=task.category.value,
        digest=digest,
        task_dir=task.task_dir,
        description=task.description,
        signature=task.signature,
        entry=str(task.entry),
        editable_files=tuple(task.editable),
        baseline_files=read_baseline_files(task, repo_root),
        inputs=tuple(task.inputs),
        outputs=tuple(task.outputs),
        cases=tuple(task.cases),
        forbidden=tuple(task.forbidden),
        budget_seconds=task.budget_seconds,
        iterations=task.iterations,
        archs=tuple(task.archs),
    )


def read_baseline_files(task: Task, repo_root: Path) -> dict[str, bytes]:
    """The baseline's files (a baseline entry may be a folder: a repository task's code base)."""
    task_dir = repo_root / task.task_dir
    files: dict[str, bytes] = {}
    for entry in task.baseline:
        path = task_dir / entry
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in found:
            relative = file.relative_to(task_dir)
            if file.is_file() and not file.is_symlink() and not IGNORED_FOLDERS.intersection(relative.parts):
                files[relative.as_posix()] = file.read_bytes()
    return dict(sorted(files.items()))
