"""Triton's compiled kernels, cached across evaluations only where the code was trusted.

Every run compiles into its own cache (TRITON_CACHE_DIR, in the job's folder), so a candidate's
kernels and anything it writes there die with the run; each process reads back from it only what
it wrote itself (triton_cache.py: the candidate's worker can write there). Below that private cache lies a read-only
layer of kernels that only trusted code compiled: the parent fills it from the cache of a no-op
run (the task's own baseline and reference, no candidate) and nothing else, and the sandbox
mounts it read-only. A later run finds the baseline's kernels, its autotuned configs included,
already built instead of compiling them again. Triton's keys hash the source, the options, the
compiler and the target, so a kernel is only found by the compilation that made it. The child
reads the layer through triton_cache.LayeredCache; this module (the parent's side) imports no
Triton.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterable

TRUSTED_VARIABLE = "ARENA_TRUSTED_TRITON_CACHE"  # the layer's folder, as the child sees it
MANAGER = "arena.harness.triton_cache:LayeredCache"  # the child's TRITON_CACHE_MANAGER
ROOT_VARIABLE = "ARENA_KERNEL_CACHE"  # where the layer lives; default ~/.cache/arena/triton


def trusted_root() -> Path:
    """The layer's folder on this machine (made when missing)."""
    configured = os.environ.get(ROOT_VARIABLE, "")
    root = Path(configured) if configured else Path.home() / ".cache" / "arena" / "triton"
    root.mkdir(parents=True, exist_ok=True)
    return root


def promote(run_cache: Path, trusted: Path) -> int:
    """Copy a trusted run's compiled kernels into the layer (entries it already has are kept);
    returns how many kernel folders were added."""
    added = 0
    if not run_cache.is_dir():
        return 0
    trusted.mkdir(parents=True, exist_ok=True)
    for entry in run_cache.iterdir():
        target = trusted / entry.name
        if not entry.is_dir() or target.exists():
            continue
        added += place_whole(entry, target, shutil.ignore_patterns("lock", "tmp.*"))
    return added


def place_whole(entry: Path, target: Path, ignore: Callable[[str, list[str]], Iterable[str]] | None = None) -> bool:
    """Copy the folder `entry` to `target` whole or not at all (a racing copy of the same key
    wins): whether this copy is the one placed."""
    aside = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.copytree(entry, aside, ignore=ignore)
    try:
        os.rename(aside, target)
        return True
    except OSError:
        shutil.rmtree(aside, ignore_errors=True)
        return False
