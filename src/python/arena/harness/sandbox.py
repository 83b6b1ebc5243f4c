"""The OS sandbox around a harness child (bubblewrap), where this machine allows one.

What the child sees, and why:
- its own mount namespace holding only the system folders (read-only), the Python it runs and
  the folders on its import path (read-only), the GPU's device nodes, and its job folder: task/
  and baseline/ read-only, candidate/, work/, home/ and triton/ writable. The repository (its
  exemplars), the score cache and its key, the runner's state and other runs' folders are not
  there at all; /tmp is a fresh tmpfs.
- its own network namespace (no interface but loopback), IPC, UTS and cgroup namespaces.
- its own PID namespace: bubblewrap is its init, so when the child exits, the kernel kills every
  process the candidate started (daemons included); nothing outlives the evaluation. Bubblewrap
  dies with the parent, so a killed runner leaves nothing behind either.
- a user namespace, uid and gid 65534 inside. Outside, that is still the runner's user: paths are
  kept away by the mount namespace, not by file permissions, so run the runner as a dedicated
  unprivileged user (docs/harness.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Device nodes a GPU runtime opens (NVIDIA: /dev/nvidia*; AMD: /dev/kfd and /dev/dri).
GPU_DEVICES = ("nvidia*", "nvidia-caps", "kfd", "dri")
# Toolchain roots named by the environment (compilers and runtimes outside /usr and /opt).
TOOL_VARIABLES = ("CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH")
NOBODY = "65534"
# The job's folders the child may read but not change: the oracle's and the baseline's code. The
# candidate's own folder stays writable. A build writes byte code to PYTHONPYCACHEPREFIX (scratch)
# and other outputs outside the code base (docs/task-format.md), or the baseline's build fails.
TRUSTED_FOLDERS = ("task", "baseline")


def sandboxed(argv: list[str], work: Path, read_only: tuple[Path, ...] = ()) -> list[str]:
    """`argv` run inside bubblewrap with the job folder `work` and the folders `read_only` (the
    trusted kernel layer) mounted read-only (see the module's docstring)."""
    command = ["bwrap", "--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY]
    command += ["--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    command += ["--ro-bind", "/sys", "/sys"]
    for device in _gpu_devices():
        command += ["--dev-bind", str(device), str(device)]
    for folder in [*_read_only_folders(), *map(str, read_only)]:
        command += ["--ro-bind", folder, folder]
    command += ["--bind", str(work), str(work)]
    for name in TRUSTED_FOLDERS:
        command += ["--ro-bind", str(work / name), str(work / name)]
    return command + ["--chdir", str(work / "work"), "--", *argv]


def _gpu_devices() -> list[Path]:
    return sorted(path for pattern in GPU_DEVICES for path in Path("/dev").glob(pattern))


def _read_only_folders() -> list[str]:
    """The system folders, the interpreter's prefixes, the import path (and the folders its entries
    link to) and the toolchains, each once (a folder inside another listed one is covered by it)."""
    wanted: Iterable[str] = (
        *SYSTEM,
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(sys.executable).resolve().parent),
        *(os.path.abspath(p) for p in sys.path if p),
        *(os.environ[name] for name in TOOL_VARIABLES if os.environ.get(name)),
    )
    folders = [p for p in wanted if os.path.isdir(p)]
    # A PEX's unzipped layout links its packages in from elsewhere (../../user_code/...).
    linked = [os.path.realpath(entry.path) for f in folders for entry in os.scandir(f) if entry.is_symlink()]
    folders += [p for p in linked if os.path.isdir(p)]
    existing = sorted({os.path.realpath(p) for p in folders} | set(folders))
    kept: list[str] = []
    for folder in existing:  # sorted: a parent comes before its children
        if not any(folder == k or folder.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(folder)
    return kept
