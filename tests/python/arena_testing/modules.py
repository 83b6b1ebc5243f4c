"""Loading a Python file written by a test (an imported task's reference.py, a fixture's kernel)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_module(path: Path) -> ModuleType:
    """The module at `path`, run once, under the name of its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
