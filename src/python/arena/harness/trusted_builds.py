"""A HIP baseline's compiled library, reused across evaluations only where trusted code built it.

The Triton kernels' layer (kernel_cache.py) has a HIP counterpart here: every judge builds the
task's baseline (nvcc or hipcc, about 2 s of every HIP evaluation's setup) and leaves a copy of
what it built, library and object, in its work folder under the build's key; after a no-op run
(only the task's own code ran, the baseline as its own candidate) the parent promotes that copy
into the read-only layer, and nothing else does. A later judge whose baseline has the same key
copies the library from the layer instead of compiling. The key covers every file of the
baseline's folder, the compile commands, the harness's HIP header and the compiler's own
version, so only the compilation that made a library finds it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

FOLDER = "hip"  # the layer's subfolder, beside Triton's entries
STASH = "trusted-build"  # in the judge's work folder: what it built, under its key


def build_key(directory: Path, entry_file: str, backend: str, arch: str) -> str:
    """The key of building `directory`'s `entry_file` for `arch` with this machine's compiler."""
    from arena.harness.backends.hip import HEADER, compile_commands

    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(directory).as_posix()}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    commands = compile_commands(Path("SOURCE") / entry_file, Path("LIBRARY.so"), backend, arch)
    for part in (repr(commands).replace(str(HEADER), "HEADER"), HEADER.read_text(), compiler_version(backend)):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()


@functools.cache
def compiler_version(backend: str) -> str:
    """The compiler's `--version` text ('' when it does not run: then nothing is found or kept)."""
    compiler = "hipcc" if backend == "rocm" else "nvcc"
    if shutil.which(compiler) is None:
        return ""
    done = subprocess.run([compiler, "--version"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def layer() -> Path | None:
    """The layer's HIP folder as this judge sees it (read-only in the sandbox), if it has one."""
    from arena.harness.kernel_cache import TRUSTED_VARIABLE

    root = os.environ.get(TRUSTED_VARIABLE, "")
    return Path(root) / FOLDER if root else None


def fetch(key: str, library: Path) -> bool:
    """Copy the layer's library and object of `key` to `library` (and its .o); True when found."""
    found = layer()
    entry = found / key if found is not None else None
    if entry is None or not (entry / "library.so").is_file() or not (entry / "library.o").is_file():
        return False
    shutil.copyfile(entry / "library.so", library)
    shutil.copyfile(entry / "library.o", library.with_suffix(".o"))
    return True


def stash(key: str, library: Path, work: Path) -> None:
    """A copy of the library just built (and its .o) under `key`, for the parent to promote."""
    place = work / STASH / key
    place.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(library, place / "library.so")
    shutil.copyfile(library.with_suffix(".o"), place / "library.o")


def promote(work: Path, trusted: Path) -> int:
    """Copy a trusted run's stashed builds into the layer (keys it has are kept); how many added."""
    from arena.harness.kernel_cache import place_whole

    stashed, added = work / STASH, 0
    if not stashed.is_dir():
        return 0
    target_root = trusted / FOLDER
    target_root.mkdir(parents=True, exist_ok=True)
    for entry in stashed.iterdir():
        target = target_root / entry.name
        if target.exists() or not all((entry / name).is_file() for name in ("library.so", "library.o")):
            continue
        added += place_whole(entry, target)
    return added
