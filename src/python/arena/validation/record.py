"""The record of full validations that passed, which decides what the full tier runs again.

tasks/validated.json maps each task folder to the hash of its files (folder_hash) when its full
validation last passed. A task whose folder no longer hashes to its record (new or changed) is
validated in full again by `./pants test` (the plugin computes the same hash: arena_pants/rules.py,
`folder_hash`, pinned to the same figure by both sides' tests); the others get the fast tier, and a
fixed sample of them the full one too ([arena-tasks].sample in pants.toml), so that a harness change
is still caught. `arena validate-task --changed --record` validates what changed and records it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Mapping

MANIFEST = Path("tasks/validated.json")
_ABOUT = (
    "Task folders whose full validation passed, with the hash of their files then "
    "(arena validate-task --changed --record writes it; docs/adding-a-task.md)."
)


def _ignored(relative: Path) -> bool:
    """Files Pants does not see either: byte code and anything in a hidden folder."""
    folders = relative.parts[:-1]
    return relative.suffix == ".pyc" or "__pycache__" in folders or any(p.startswith(".") for p in folders)


def folder_hash(folder: Path) -> str:
    """sha256 of the sorted lines "<sha256 of the file> <path in the folder>", one per file."""
    lines = sorted(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.relative_to(folder).as_posix()}\n"
        for path in folder.rglob("*")
        if path.is_file() and not _ignored(path.relative_to(folder))
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def read_record(repo_root: Path) -> dict[str, str]:
    """Task folder -> recorded hash ({} when there is no record yet)."""
    path = repo_root / MANIFEST
    if not path.exists():
        return {}
    entries = json.loads(path.read_text()).get("tasks", {})
    return {str(folder): str(entry["hash"]) for folder, entry in entries.items()}


def is_recorded(repo_root: Path, task_dir: str, record: Mapping[str, str]) -> bool:
    return record.get(task_dir) == folder_hash(repo_root / task_dir)


def write_record(repo_root: Path, passed: list[str], today: datetime.date | None = None) -> None:
    """Record the current hash of every folder in `passed`; other entries stay as they were, except
    those whose folder is gone."""
    path = repo_root / MANIFEST
    raw = json.loads(path.read_text()) if path.exists() else {}
    entries = {k: v for k, v in raw.get("tasks", {}).items() if (repo_root / k).is_dir()}
    stamp = (today or datetime.date.today()).isoformat()
    for task_dir in passed:
        entries[task_dir] = {"hash": folder_hash(repo_root / task_dir), "validated": stamp}
    document = {"about": _ABOUT, "tasks": dict(sorted(entries.items()))}
    path.write_text(json.dumps(document, indent=1) + "\n")
