"""Reading kernel_task declarations from BUILD files, without Pants.

BUILD files are parsed with `ast` and never executed: only top-level `kernel_task(...)` calls
are read, each keyword through `ast.literal_eval`, then validated by arena.task.declaration.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from arena.errors import ArenaError, TaskDeclarationError, UnknownTask
from arena.task.declaration import build_task
from arena.task.task import Task

TARGET_TYPE = "kernel_task"
TASKS_FOLDER = "tasks"


def find_repo_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: the working directory) holding pants.toml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pants.toml").is_file():
            return folder
    raise ArenaError(f"no pants.toml at or above {here}: run arena inside the kernel arena repository")


def load_tasks(repo_root: Path) -> tuple[Task, ...]:
    """Every kernel_task under tasks/, validated, sorted by address."""
    root = repo_root.resolve()
    tasks: list[Task] = []
    for build_file in sorted((root / TASKS_FOLDER).rglob("BUILD")):
        if build_file.is_file():
            tasks += read_build_file(build_file, root)
    return tuple(sorted(tasks, key=lambda task: task.address))


def load_task(repo_root: Path, address: str) -> Task:
    """The task at `address`: "tasks/x/y", "tasks/x/y:y" or "//tasks/x/y:y"."""
    root = repo_root.resolve()
    folder, name = parse_address(address)
    build_file = root / folder / "BUILD"
    if not build_file.is_file() or not (root / folder).resolve().is_relative_to(root / TASKS_FOLDER):
        raise UnknownTask(f"no task at {address!r}: {folder}/BUILD does not exist under {TASKS_FOLDER}/")
    for task in read_build_file(build_file, root):
        if task.name == name:
            return task
    raise UnknownTask(f"no kernel_task named {name!r} in {folder}/BUILD")


def parse_address(address: str) -> tuple[str, str]:
    """(folder relative to the repo root, target name) of a task address."""
    text = address.strip().removeprefix("//")
    folder, _, name = text.partition(":")
    folder = folder.strip("/")
    if not folder or ".." in folder.split("/") or not folder.startswith(f"{TASKS_FOLDER}/"):
        raise UnknownTask(f"{address!r} is not a task address (like {TASKS_FOLDER}/<category>/<task>)")
    return folder, name or folder.rsplit("/", 1)[-1]


def read_build_file(build_file: Path, repo_root: Path) -> list[Task]:
    """The validated kernel_task targets of one BUILD file (repo_root resolved)."""
    shown = build_file.relative_to(repo_root).as_posix()
    try:
        tree = ast.parse(build_file.read_text(encoding="utf-8"), filename=shown)
    except (SyntaxError, UnicodeDecodeError) as error:
        raise TaskDeclarationError(f"{shown}: cannot be parsed: {error}") from None
    tasks: list[Task] = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == TARGET_TYPE):
            continue
        kwargs = _literal_kwargs(call, shown)
        task = build_task(kwargs, shown, build_file.parent, repo_root)
        if any(other.name == task.name for other in tasks):
            raise TaskDeclarationError(f"{shown}: {TARGET_TYPE} {task.name!r}: field 'name': used twice in this file")
        tasks.append(task)
    return tasks


def _literal_kwargs(call: ast.Call, shown: str) -> dict[str, Any]:
    names = [k.value.value for k in call.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)]
    label = f"{TARGET_TYPE} {names[0]!r}" if names and isinstance(names[0], str) else TARGET_TYPE
    where = f"{shown}:{call.lineno}: {label}"
    if call.args:
        raise TaskDeclarationError(f"{where}: takes keyword arguments only")
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise TaskDeclarationError(f"{where}: **kwargs is not allowed; write every field out")
        if keyword.arg in kwargs:
            raise TaskDeclarationError(f"{where}: field {keyword.arg!r}: given twice")
        try:
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            raise TaskDeclarationError(f"{where}: field {keyword.arg!r}: must be a literal") from None
    return kwargs
