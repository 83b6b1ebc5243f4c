"""Checks that every path a task names is a plain relative path that stays inside its folder."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from arena.task.checks import FieldError, require_str_list


def check_relative_path(field: str, name: str) -> str:
    """`name` is relative, normalised, POSIX-style and has no '..' part."""
    if not name or name.startswith("/") or "\\" in name or (len(name) > 1 and name[1] == ":"):
        raise FieldError(field, f"path {name!r} must be relative to the task folder")
    parts = name.split("/")
    if ".." in parts:
        raise FieldError(field, f"path {name!r} must not contain '..'")
    if str(PurePosixPath(name)) != name.rstrip("/") or "." in parts:
        raise FieldError(field, f"path {name!r} is not normalised (write {str(PurePosixPath(name))!r})")
    return name.rstrip("/")


def resolve_inside(field: str, task_dir: Path, name: str) -> Path:
    """task_dir/name, checked to stay inside task_dir after following symlinks."""
    check_relative_path(field, name)
    path = task_dir / name
    root = task_dir.resolve()
    if not path.resolve().is_relative_to(root):
        raise FieldError(field, f"path {name!r} leads outside the task folder")
    return path


def check_file(field: str, task_dir: Path, name: str) -> str:
    path = resolve_inside(field, task_dir, name)
    if not path.is_file():
        raise FieldError(field, f"file {name!r} does not exist in {task_dir.name}/")
    return name


def check_file_or_folder(field: str, task_dir: Path, name: str) -> str:
    path = resolve_inside(field, task_dir, name)
    if not path.exists():
        raise FieldError(field, f"{name!r} does not exist in {task_dir.name}/")
    return name.rstrip("/")


def files_under(field: str, task_dir: Path, folder: str) -> tuple[str, ...]:
    """Every file below task_dir/folder, relative to that folder; a symlink inside is an error."""
    path = resolve_inside(field, task_dir, folder)
    if not path.is_dir() or path.is_symlink():
        raise FieldError(field, f"folder {folder!r} does not exist in {task_dir.name}/")
    found = []
    for parent, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in dirs + files:
            full = Path(parent) / name
            if full.is_symlink():
                raise FieldError(field, f"{full.relative_to(task_dir).as_posix()!r} is a symlink")
        found += [(Path(parent) / f).relative_to(path).as_posix() for f in files if not f.endswith(".pyc")]
    if not found:
        raise FieldError(field, f"folder {folder!r} holds no files")
    return tuple(sorted(found))


def is_allowed(name: str, editable: tuple[str, ...]) -> bool:
    """`name` (relative) is an editable file or lies under an editable folder."""
    return any(name == entry or name.startswith(entry + "/") for entry in editable)


def check_files(field: str, value: Any, task_dir: Path, *, empty: bool = False) -> tuple[str, ...]:
    names = require_str_list(field, value, empty=empty)
    return tuple(check_file(field, task_dir, name) for name in names)


def check_editable(value: Any, baseline: tuple[str, ...], task_dir: Path) -> tuple[str, ...]:
    if value is None:
        return baseline
    names = require_str_list("editable", value, empty=False)
    return tuple(check_file_or_folder("editable", task_dir, name) for name in names)


def check_candidate_folder(field: str, task_dir: Path, folder: str, editable: tuple[str, ...]) -> None:
    for name in files_under(field, task_dir, folder):
        if not is_allowed(name, editable):
            raise FieldError(field, f"{folder}/{name} is not at an editable path ({', '.join(editable)})")
