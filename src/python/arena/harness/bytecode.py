"""Byte code for the harness children's imports, where the measurement environment ships none.

A Python installed without byte code (pip --no-compile; the H200 machine's torch holds no .pyc
for its 2141 .py files) compiles every module it imports, in every process: `import torch` is
then about twice as slow (4.5-5.2 s against 1.9-2.3 s on the CPU machine), and each evaluation
pays it in its judge and its worker. Children may not write byte code (PYTHONDONTWRITEBYTECODE:
what one child wrote, the next would run), so the parent, which is trusted, compiles the
measurement environment's imports once into a folder of its own (importing them with
PYTHONPYCACHEPREFIX there), named by the interpreter and its roots; children read it and see it
read-only. Where the environment has byte code of its own, nothing is made and children read
that, as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from arena.environment.measurement import Measurement

COMPLETE = "complete"  # written last: a folder without it is not used
IMPORT_TIMEOUT_S = 300.0
_PROBE = "torch"  # the package whose byte code tells whether the environment ships any
# What the judge and its worker import before and around a job (child.py, worker.py, run.py).
IMPORTS = ("torch", "triton", "numpy", "arena.harness.run", "arena.harness.worker", "arena.harness.judged_timing")
# Each imported alone: one the environment lacks (a CPU machine's triton, say) stops no other.
_IMPORT_ALL = "\n".join(
    [
        "import importlib",
        f"for name in {IMPORTS!r}:",
        "    try:",
        "        importlib.import_module(name)",
        "    except Exception:",
        "        pass",
    ]
)


def bytecode_folder(measurement: Measurement, cache: Path | None = None) -> Path | None:
    """The folder children read byte code from, made now if it is missing; None where the
    environment ships byte code of its own, has no torch to judge by, or the folder could not be
    made (children then compile what they import, as they always could)."""
    source = probe_source(measurement)
    if source is None or has_bytecode(source, measurement.versions.get("python", "")):
        return None
    folder = (cache or default_cache()) / _key(measurement)
    if (folder / COMPLETE).is_file():
        return folder
    return compile_imports(measurement, folder)


def default_cache() -> Path:
    """Beside the measurement probe's cache (measurement.py): one per user, whatever XDG says."""
    return Path.home() / ".cache" / "arena" / "bytecode"


def probe_source(measurement: Measurement) -> Path | None:
    """torch's __init__.py under the first import root that holds it."""
    for root in measurement.path:
        candidate = Path(root) / _PROBE / "__init__.py"
        if candidate.is_file():
            return candidate
    return None


def has_bytecode(source: Path, python_version: str) -> bool:
    """Whether `source` has a .pyc of this interpreter's tag beside it (__pycache__)."""
    parts = python_version.split(".")
    if len(parts) < 2:
        return True  # cannot tell: leave the environment as it is
    tag = f"cpython-{parts[0]}{parts[1]}"
    return any((source.parent / "__pycache__").glob(f"{source.stem}.{tag}*.pyc"))


def compile_imports(measurement: Measurement, folder: Path) -> Path | None:
    """What a judge and its worker import (IMPORTS and all they import in turn), imported once by
    `measurement`'s interpreter with PYTHONPYCACHEPREFIX on a folder made beside `folder`: that
    interpreter writes their byte code there (a mirror tree), and only there; renamed into place
    whole, so a parent doing the same at once, or killed meanwhile, leaves nothing half made."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    scratch.chmod(0o755)  # children run as another user (sandbox.child_user) and read it
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(PYTHONPYCACHEPREFIX=str(scratch), PYTHONPATH=os.pathsep.join(measurement.path), PYTHONNOUSERSITE="1")
    try:
        subprocess.run(
            [measurement.python, "-c", _IMPORT_ALL],
            env=env,
            cwd=scratch,
            capture_output=True,
            timeout=IMPORT_TIMEOUT_S,
            check=False,
        )
        (scratch / COMPLETE).write_text(" ".join(IMPORTS) + "\n")
        os.rename(scratch, folder)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        return folder if (folder / COMPLETE).is_file() else None  # another parent made it first
    except subprocess.TimeoutExpired:
        shutil.rmtree(scratch, ignore_errors=True)
        return None
    return folder


def _key(measurement: Measurement) -> str:
    """The interpreter, its versions and its roots: another environment gets another folder."""
    described = "\n".join([measurement.python, *measurement.path])
    described += "\n" + "\n".join(f"{k}={v}" for k, v in sorted(measurement.versions.items()))
    return hashlib.sha256(described.encode()).hexdigest()[:24]
