"""The output folder of an import: a task tree arena can load, never committed.

Layout: OUT/pants.toml (a marker: arena finds a task tree's root by it, as it finds this
repository's) and OUT/tasks/<their task path>/{BUILD, kernel file, reference.py}, so
`arena --repo-root OUT validate-task --task tasks/triton2triton/vllm/<task>` works. Each
declaration is loaded back with arena's own loader before it counts as imported.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from arena.errors import ArenaError, TaskDeclarationError
from arena.importer.outcome import LoaderRefused
from arena.task.load import TASKS_FOLDER, read_build_file

MARKER = "pants.toml"
MARKER_TEXT = (
    "# Written by `arena import aka`: the root of imported kernel_task declarations, found by\n"
    "# `arena --repo-root`. Not a Pants project; the tasks hold third-party code: never commit them.\n"
)


def prepare_output(out: Path) -> None:
    """Create `out`, or empty the tasks of an earlier import there; refuse any other folder."""
    if out.exists() and not out.is_dir():
        raise ArenaError(f"--out {out} exists and is not a folder")
    marker = out / MARKER
    if out.exists() and any(out.iterdir()):
        if not (marker.is_file() and marker.read_text(encoding="utf-8") == MARKER_TEXT):
            raise ArenaError(f"--out {out} is not empty and holds no earlier import: give a new or empty folder")
        shutil.rmtree(out / TASKS_FOLDER, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(MARKER_TEXT, encoding="utf-8")


def write_task(out: Path, source: str, files: dict[str, bytes]) -> str:
    """Write one task's files under out/tasks/<source>/ and load its declaration back; its address.
    A declaration arena refuses is removed again, with arena's message as the reason."""
    root = out.resolve()
    folder = root / TASKS_FOLDER / source
    folder.mkdir(parents=True, exist_ok=True)
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    try:
        tasks = read_build_file(folder / "BUILD", root)
    except TaskDeclarationError as error:
        shutil.rmtree(folder)
        raise LoaderRefused(f"arena refuses the declaration: {error}") from None
    return tasks[0].address
