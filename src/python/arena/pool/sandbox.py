"""The OS sandbox around a pool worker's command (bubblewrap): what a local harness child gets
(arena/harness/sandbox.py), laid out on a lease's folder.

Until session 27 the worker ran its command as its own user, with the whole file system in view
and namespaces of its own for PIDs, network, IPC and UTS only. On a root worker the candidate was
root; on any worker it could read the worker's files and change what later commands import
wherever the worker's user may write (a virtualenv the worker owns): one candidate could then
forge every later result of that worker. Now the command sees:
- read-only: the system folders, the toolchains, and the python3 the command's PATH finds, with
  its prefixes and import path (asked of it once, isolated: -I);
- its lease's input root, writable, but for what the harness trusts, shown read-only (run/task
  and run/baseline: the oracle's and the baseline's code; src/: the arena sources the child
  imports: executors/remote.py's layout); as /tmp a folder of the lease on disk (the worker's
  watch reads it); /dev/shm a bounded tmpfs of its own;
- the GPU's device nodes (which GPU it uses: CUDA_VISIBLE_DEVICES and its like, as before);
- PID, network, IPC, UTS and cgroup namespaces of its own; under a root worker a uid of its own,
  leased for the command's life (arena.environment.users); under another, the worker's user
  through a user namespace.
Where bubblewrap cannot make its namespaces here, `arena pool worker` refuses to start unless told
`--allow-unisolated`; it then keeps util-linux unshare's namespaces (worker.pid_namespace) and
says so when it starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Mapping

from arena.environment.probe import child_users, sandbox_tool
from arena.environment.users import ChildUser, lease
from arena.harness.sandbox import Layout, give, readable, sandbox_command
from arena.limits.limits import Lifeline

TRUSTED = ("run/task", "run/baseline", "src")  # of the remote executor's input root, read-only
_ASK_TIMEOUT_S = 60
_NO_ENVIRONMENT: dict[str, str] = {}  # the asked python3 gets nothing of the worker's or the action's
_FOLDERS = "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]))"


def isolation() -> str:
    """How this worker's commands are kept apart, for its first line."""
    tool = sandbox_tool()
    if not tool:
        return "no bubblewrap here: commands see this host's files as the worker's user (unshare's namespaces only)"
    users = child_users()
    return f"{tool}, as {users.describe() if users is not None else 'the worker user in a user namespace'}"


@contextlib.contextmanager
def sandboxed_command(
    argv: list[str], inputs: Path, start: Path, environment: Mapping[str, str], lifeline: Lifeline | None = None
) -> Iterator[list[str]]:
    """`argv` in bubblewrap over the input root `inputs` (a folder of the lease's, which also
    holds its /tmp), starting in `start`; the python3 that `environment`'s PATH finds is shown,
    and runs the `lifeline`'s end first when given. Its user, under a root worker, is held until
    the block ends (the command has ended)."""
    real = Path(os.path.realpath(inputs))  # what bubblewrap binds: the same paths inside
    start, inputs = real / start.relative_to(inputs), real
    lease_folder = inputs.parent
    tmp = lease_folder / "tmp"
    tmp.mkdir(exist_ok=True)
    # Real folders only: a link from the action (`src` -> /root) would be shown where it points.
    trusted = tuple(inputs / name for name in TRUSTED if os.path.realpath(inputs / name) == str(inputs / name))
    trusted = tuple(folder for folder in trusted if folder.is_dir())
    layout = Layout(inputs, tmp, start, trusted, inputs, lease_folder / "identity")
    users = child_users()
    held = None if users is None else lease(users)
    try:
        if held is not None:
            hand_over_lease(inputs, tmp, trusted, held.user)
        python = host_python(environment.get("PATH", os.defpath), lease_folder)
        shown = tuple(Path(folder) for folder in (_folders_of(python) if python else ()))
        first = lifeline.prefix(python) if lifeline is not None and python else ()
        user = None if held is None else held.user
        yield sandbox_command(argv, layout, read_only=shown, user=user, first_process=first)
    finally:
        if held is not None:
            held.release()


def hand_over_lease(inputs: Path, tmp: Path, trusted: tuple[Path, ...], user: ChildUser) -> None:
    """The input root and /tmp owned by `user`, but for the `trusted` folders: the worker's,
    readable by all (the command reads the oracle; it must not change it)."""
    give(tmp, user)
    os.chown(inputs, user.uid, user.gid)
    os.chmod(inputs, 0o700)
    for folder, dirs, files in os.walk(inputs):
        here = Path(folder)
        for name in dirs[:]:
            path = here / name
            if path in trusted:
                dirs.remove(name)  # not walked: the worker's
                readable(path)
            elif any(path in guarded.parents for guarded in trusted):
                os.chown(path, user.uid, user.gid, follow_symlinks=False)  # run/: holds the trusted
            else:
                dirs.remove(name)
                give(path, user)
        for name in files:
            os.chown(here / name, user.uid, user.gid, follow_symlinks=False)


def interpreter_folders(path: str, lease: Path) -> tuple[str, ...]:
    """The folders the python3 found on `path` (host_python) needs shown: its prefixes, its import
    path and its own folder; () where none is found (the command then fails and says so)."""
    python = host_python(path, lease)
    return _folders_of(python) if python else ()


def host_python(path: str, lease: Path) -> str | None:
    """The python3 found on `path`, if it is this host's own: a folder of `path` that is relative
    or lies in the `lease` folder is passed over, and so is a python3 that lies there once its
    links are followed (the worker runs it, as root on a GPU machine, to ask its folders: an
    action's own "python3" ran there outside any sandbox)."""
    lease_root = os.path.realpath(lease)
    folders = [f for f in path.split(os.pathsep) if os.path.isabs(f) and not _inside(os.path.realpath(f), lease_root)]
    python = shutil.which("python3", path=os.pathsep.join(folders))
    if python is None or _inside(os.path.realpath(python), lease_root):
        return None
    return os.path.abspath(python)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@lru_cache(maxsize=8)
def _folders_of(python: str) -> tuple[str, ...]:
    try:
        done = subprocess.run(
            [python, "-I", "-c", _FOLDERS], capture_output=True, text=True, timeout=_ASK_TIMEOUT_S, env=_NO_ENVIRONMENT
        )
        answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else []
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        answer = []
    folders = [os.path.dirname(os.path.realpath(python)), *(str(f) for f in answer if isinstance(f, str))]
    return tuple(dict.fromkeys(os.path.abspath(f) for f in folders if f and os.path.isdir(f)))
