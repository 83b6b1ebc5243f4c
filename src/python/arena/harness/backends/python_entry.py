"""Python entries (Triton kernels, repository code, PyTorch references) loaded from a file path."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from typing import Any, Callable

from arena.harness.backends.kernel import Kernel
from arena.task.task import Entry

_serial = itertools.count()


def load_python_entry(directory: Path, entry: Entry, label: str) -> Kernel:
    """Import `entry.file` from `directory` under a fresh module name; ImportError/AttributeError on failure.

    The directory is on sys.path only during the import, and modules it brought in are
    dropped from sys.modules afterwards, so a baseline's `helpers.py` is never the
    candidate's `helpers.py` (each keeps its own through its module globals).
    """
    path = directory / entry.file
    name = f"arena_{label}_{next(_serial)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {entry.file}")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    sys.modules[name] = module  # Triton's JIT looks functions' modules up here
    sys.path.insert(0, str(directory))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(directory))
        root = directory.resolve()
        for key in set(sys.modules) - before - {name}:
            file = getattr(sys.modules[key], "__file__", None) or ""
            if file and Path(file).resolve().is_relative_to(root):
                del sys.modules[key]
    function = getattr(module, entry.symbol, None)
    if not callable(function):
        raise AttributeError(f"{entry.file} defines no callable {entry.symbol!r}")
    kernel: Callable[..., Any] = function  # named so the closure below keeps the narrowed type
    positional = entry.positional

    def invoke(inputs: Any, scalars: Any, outputs: Any, dims: Any) -> Any:
        if not positional:
            return kernel(*inputs, **scalars)
        # The task's abi: inputs and scalars by position in its order, the other scalars by name.
        args = [inputs[p] if isinstance(p, int) else scalars[p] for p in positional]
        return kernel(*args, **{k: v for k, v in scalars.items() if k not in positional})

    return Kernel(label=label, invoke=invoke, harness_outputs=False)
