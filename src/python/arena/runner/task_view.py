"""What an agent may see of a task: never exemplars, the wrong candidate, the reference or hidden cases."""

from __future__ import annotations

from pathlib import Path

from arena.candidate.allowlist import IGNORED_FOLDERS
from arena.runner.records import TaskView
from arena.scoring.score import POINTS_COMPILED, POINTS_CORRECT, POINTS_PER_SPEEDUP
from arena.task.task import Task

# The pinned image (third_party/rocm/image.lock) on the GPU the AMD architectures name.
AMD_REFERENCE_PLATFORM = "AMD Instinct MI300X (gfx942) with ROCm 7.1.1"
SCORING_RULE = (
    f"A candidate that compiles scores {POINTS_COMPILED:g} points; correct on every test case (the "
    f"declared ones and hidden ones the harness draws with fresh seeds at evaluation time), "
    f"{POINTS_CORRECT:g} more; then {POINTS_PER_SPEEDUP:g} x its speedup over the baseline (the mean "
    "of the per-case ratios of baseline to candidate mean time, outliers dropped, over the timed "
    "cases, both timed on the same GPU). An incorrect candidate earns no speedup points."
)


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
        tolerances=dict(sorted(task.tolerances.items())),
        scalars=dict(task.scalars),
        reference_platform=reference_platform(task),
        points_compiled=POINTS_COMPILED,
        points_correct=POINTS_CORRECT,
        points_per_speedup=POINTS_PER_SPEEDUP,
        scoring_rule=SCORING_RULE,
    )


def reference_platform(task: Task) -> str:
    """HIP tasks, and every task that runs on an AMD architecture, are measured on the pinned
    ROCm image; a task for NVIDIA architectures only names none."""
    if task.category.is_hip or any(arch.startswith("gfx") for arch in task.archs):
        return AMD_REFERENCE_PLATFORM
    return ""


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
