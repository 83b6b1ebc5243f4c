"""AgentKernelArena's hip2hip and torch2hip tasks, read as data: which of them arena's HIP format
could hold, and why not (docs/importer.md, "hip2hip and torch2hip").

Arena's HIP task is a C launcher (`extern "C" int fn(pointers, int64_t dims, hipStream_t)`) that
the harness builds with hipcc (nvcc on CUDA) and loads with ctypes, started from a baseline that
the candidate is timed against, its inputs drawn by arena and checked against a PyTorch reference
(docs/task-format.md). AKA's are, in the order they are checked here (the first that applies is
the reason): an empty HIP file the agent writes from a PyTorch module (torch2hip), a standalone
program with its own `main()` that checks itself, a PyTorch C++ extension (its HIP source defines
`PYBIND11_MODULE`, built by torch.utils.cpp_extension), or a launcher that a C++ file of the task
binds to Python as such an extension. The text is scanned, comments left out; nothing is run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

from arena.importer.checkout import SourceTask, inside
from arena.importer.config import TaskConfig
from arena.importer.outcome import NotImportable

HIP_CATEGORIES = ("hip2hip", "torch2hip")

# Each reason's group in the report; the reason itself begins with it.
NO_BASELINE = "no HIP baseline"
PROGRAM = "a standalone HIP program"
EXTENSION = "a PyTorch C++ extension"
BOUND = "a launcher bound by a PyTorch C++ extension"
UNREAD = "a HIP layout the importer does not read"

_ARENA = 'arena\'s HIP tasks are C launchers (extern "C") loaded with ctypes'
_C_SOURCES = (".cpp", ".cc", ".cxx", ".cu", ".hip")
_BUILD_FILES = ("Makefile", "CMakeLists.txt")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_PYBIND = re.compile(r"\bPYBIND11_MODULE\s*\(")
_MAIN = re.compile(r"^\s*int\s+main\s*\(", re.MULTILINE)


def refuse_hip_task(task: SourceTask, checkout: Path, config: TaskConfig) -> NoReturn:
    """NotImportable with the first reason that applies to this hip2hip or torch2hip task."""
    if len(config.source_files) != 1:
        raise NotImportable(f"source_file_path lists {len(config.source_files)} files; the importer reads one")
    source = config.source_files[0]
    hip = config.target_file or source  # the file the agent edits: the HIP source
    text = _source_text(checkout, task.folder, hip)
    if not text.strip():
        written = f" (target_file_path) is empty, the agent writes it from {source}" if hip != source else " is empty"
        raise NotImportable(
            f"{NO_BASELINE}: {hip}{written}; arena's HIP tasks start from a baseline launcher that the "
            "candidate is timed against",
            NO_BASELINE,
        )
    code = _COMMENTS.sub("", text)
    if _MAIN.search(code):
        built = next((name for name in _BUILD_FILES if (task.folder / name).is_file()), "")
        how = f", built by its {built}" if built else ""
        raise NotImportable(
            f"{PROGRAM} (`int main` in {hip}{how}) that checks its own results; {_ARENA} and checked "
            "against a PyTorch reference",
            PROGRAM,
        )
    if _PYBIND.search(code):
        raise NotImportable(f"{EXTENSION} (PYBIND11_MODULE in {hip}): {_ARENA}", EXTENSION)
    binding, loader = _binding(checkout, task.folder, hip)
    if binding:
        where = f"which {loader} compiles with {hip}" if loader else f"beside {hip}"
        raise NotImportable(f"{BOUND} (PYBIND11_MODULE in {binding}, {where}): {_ARENA}", BOUND)
    raise NotImportable(
        f"{UNREAD}: {hip} is neither a PyTorch C++ extension nor a standalone program, and no reading "
        "of a HIP task's test is written",
        UNREAD,
    )


def _source_text(checkout: Path, folder: Path, relative: str) -> str:
    path = folder / relative
    if ".." in Path(relative).parts or not inside(checkout, path) or not path.is_file():
        raise NotImportable(f"{relative} is not a file inside the task folder")
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise NotImportable(f"{relative} cannot be read: {error}") from None


def _binding(checkout: Path, folder: Path, hip: str) -> tuple[str, str]:
    """The task's C++ file, other than `hip`, that defines PYBIND11_MODULE, and the Python file of
    the task that names it beside `hip` (`load(sources=["src/k.hip", "src/k.cpp"])`): the first
    such pair by path, else the first such file and ""; ("", "") when none defines it."""
    bindings = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.suffix not in _C_SOURCES or relative == hip or not path.is_file() or not inside(checkout, path):
            continue
        if _PYBIND.search(_COMMENTS.sub("", path.read_text(encoding="utf-8", errors="replace"))):
            bindings.append(relative)
    loaders = [
        (path.relative_to(folder).as_posix(), path.read_text(encoding="utf-8", errors="replace"))
        for path in sorted(folder.rglob("*.py"))
        if path.is_file() and inside(checkout, path)
    ]
    named = [(b, name) for b in bindings for name, text in loaders if b in text and hip in text]
    return (named or [(b, "") for b in bindings] or [("", "")])[0]
