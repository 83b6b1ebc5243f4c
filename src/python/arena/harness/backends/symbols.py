"""What a HIP candidate's code reaches for outside itself: the undefined symbols of its object.

The source check reads tokens, and names built by the preprocessor (token pasting, macros) pass
it. The compiler cannot be fooled that way: every function the candidate's code calls outside it
is an undefined symbol of the object file it compiles to (before linking, so the toolchain's own
runtime, e.g. CUDA's static cudart with its dlopen and threads, is not counted). These families
are refused, before the library is loaded (loading runs its static constructors), unless the
baseline's own object uses them too. A name built at run time still needs dlsym to be reached.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import AbstractSet as Set

# (what it reaches, exact names, name prefixes)
FAMILIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("dynamic loading", ("dlopen", "dlsym", "dlvsym", "dlmopen", "__libc_dlopen_mode", "__libc_dlsym"), ()),
    ("the Python C API", (), ("Py", "_Py")),
    ("a vendor BLAS or DNN library", (), ("cublas", "cudnn", "cutlass", "rocblas", "hipblas", "miopen", "rocsolver")),
    (
        "threads or processes",
        (
            "pthread_create",
            "fork",
            "vfork",
            "clone",
            "clone3",
            "execve",
            "execv",
            "execvp",
            "execl",
            "system",
            "popen",
            "posix_spawn",
            "posix_spawnp",
        ),
        ("_ZNSt6thread",),  # std::thread
    ),
)


def undefined_symbols(obj: Path) -> set[str]:
    """An object file's undefined symbols, without version suffixes (nm from binutils)."""
    if shutil.which("nm") is None:
        raise RuntimeError("nm (binutils) is needed to check a built object's symbols")
    done = subprocess.run(["nm", "--undefined-only", str(obj)], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in done.stdout.splitlines() if line.strip()}


def refused_symbols(symbols: set[str], allowed: Set[str] = frozenset()) -> list[tuple[str, str]]:
    """(symbol, what it reaches) for each symbol of a refused family that `allowed` lacks."""
    found = []
    for symbol in sorted(symbols - allowed):
        for reaches, names, prefixes in FAMILIES:
            if symbol in names or symbol.startswith(prefixes):
                found.append((symbol, reaches))
                break
    return found
