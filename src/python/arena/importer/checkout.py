"""An AgentKernelArena checkout: its triton2triton, hip2hip and torch2hip tasks, each a folder
holding a config.yaml (as their own task registry finds them: the folder's path under tasks/ names
the task)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from arena.importer.config import CONFIG_FILE

TASKS_FOLDER = "tasks"
CATEGORY = "triton2triton"
CATEGORIES = ("hip2hip", "torch2hip", CATEGORY)  # the folders read; only triton2triton's tasks import


@dataclass(frozen=True)
class SourceTask:
    name: str  # relative to the checkout's tasks/, e.g. "triton2triton/vllm/triton_rms_norm"
    folder: Path  # absolute


def find_tasks(checkout: Path) -> list[SourceTask]:
    """Every task of `checkout` in CATEGORIES, sorted by name; ArenaError when it is no checkout (it
    has no tasks/triton2triton/)."""
    if not checkout.is_dir():
        raise ArenaError(f"{checkout} is not a folder: give the path of an AgentKernelArena checkout")
    tasks_root = checkout.resolve() / TASKS_FOLDER
    category = tasks_root / CATEGORY
    if not category.is_dir():
        raise ArenaError(f"{checkout} has no {TASKS_FOLDER}/{CATEGORY}/ folder: it is not an AgentKernelArena checkout")
    folders = [tasks_root / name for name in CATEGORIES if (tasks_root / name).is_dir()]
    configs = sorted(path for folder in folders for path in folder.rglob(CONFIG_FILE) if path.is_file())
    return [SourceTask(path.parent.relative_to(tasks_root).as_posix(), path.parent) for path in configs]


def inside(checkout: Path, path: Path) -> bool:
    """Whether `path` (links followed) lies inside the checkout: nothing outside it is read."""
    return path.resolve().is_relative_to(checkout.resolve())
