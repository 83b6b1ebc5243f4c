"""The OS sandbox around a harness child (bubblewrap), where this machine allows one.

What the child sees, and why:
- its own mount namespace holding only the system folders (read-only), the toolchains, the
  measurement environment's explicit roots (read-only: the interpreter's prefixes, the folder
  holding the arena package, site-packages; never the launcher's import path or working
  folder: environment/measurement.py), the GPU's device nodes, and its job folder: task/ and
  baseline/ read-only, candidate/, work/, home/ and triton/ writable. The repository (its
  exemplars), the score cache and its key, the runner's state and other runs' folders are not
  there at all; /tmp is an empty folder of the job (on disk, where the parent's watch bounds it:
  arena.limits), /dev/shm a tmpfs of its own of at most SHM_BYTES (CUDA's interprocess events
  need a tmpfs there). A folder to be shown that holds one of them (a checkout's
  root, a .arena folder, a score cache) is refused, and no child starts (refuse_exposed).
- its own network namespace (no interface but loopback), IPC, UTS and cgroup namespaces.
- its own PID namespace: bubblewrap is its init, so when the child exits, the kernel kills every
  process the candidate started (daemons included); nothing outlives the evaluation. Bubblewrap
  dies with the parent, so a killed runner leaves nothing behind either.
- an unprivileged user outside as well as inside. A runner that is not root: a user namespace,
  uid and gid 65534 inside, the runner's own user outside. A runner that is root: bubblewrap
  makes the namespaces as root (so it can reach folders under a HOME only root may enter) and
  the child is started through setpriv as a uid no other running sandbox has (leased from
  ARENA_SANDBOX_USER's range: arena.environment.users, so the kernel's count of a user's tasks is
  its own), with no capabilities and no groups but those owning the GPU's device nodes: a real,
  unprivileged user of the host, so a file only root may read (/etc/shadow) stays closed, and the
  job's writable folders are handed to that user (hand_over). Its /etc/passwd and /etc/group name
  it (identity_files), for the tools that look their user up.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from arena.environment.users import ChildUser
from arena.errors import UnusableEnvironment

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Device nodes a GPU runtime opens (NVIDIA: /dev/nvidia*; AMD: /dev/kfd and /dev/dri).
GPU_DEVICES = ("nvidia*", "nvidia-caps", "kfd", "dri")
# Toolchain roots named by the environment (compilers and runtimes outside /usr and /opt).
TOOL_VARIABLES = ("CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH")
NOBODY = "65534"
IDENTITY_NAME = "arena-sandbox"  # a leased user's name in the sandbox's /etc/passwd
# The job's folders the child may read but not change: the oracle's and the baseline's code. The
# candidate's own folder stays writable. A build writes byte code to PYTHONPYCACHEPREFIX (scratch)
# and other outputs outside the code base (docs/task-format.md), or the baseline's build fails.
TRUSTED_FOLDERS = ("task", "baseline")
TMP_FOLDER = "tmp"  # the job folder's, shown as /tmp
SCRATCH_MOUNTS = {TMP_FOLDER: "/tmp"}  # job folder -> where the child sees it
# /dev/shm must be a tmpfs: the CUDA runtime refuses an interprocess event (the judge's and the
# worker's, shared_gpu.py) where it is a folder on disk (H200, session 26: error 1). So it is a
# tmpfs of the child's own, at most this big: memory, counted where the child has a control group.
SHM_BYTES = 1 << 30
WRITABLE_FOLDERS = ("candidate", "work", "home", "triton", *SCRATCH_MOUNTS)
# What a folder shown to a child must not hold at its top: a checkout (its tasks and exemplars),
# .arena; nor there or one folder down, the runner's and the score cache's files
# (arena/runner/runner.py, arena/cache/sqlite_store.py; the XDG state folder holds runner/).
STATE_MARKERS = (".arena", "pants.toml")
STATE_FILES = ("scores.sqlite", "scores.key", "runner.sqlite")
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")


@dataclass(frozen=True)
class Layout:
    """Where a sandbox's folders lie: the one it may write (shown at its own path), its /tmp
    (a folder of that one, on disk), where it starts, the folders inside it shown read-only (the
    oracle's and the baseline's code), its HOME, and where its user's entries are written."""

    writable: Path
    tmp: Path
    start: Path
    trusted: tuple[Path, ...]
    home: Path
    identity: Path


def job_layout(work: Path) -> Layout:
    """A harness child's: its job folder (harness/job.py's folders; the caller made them)."""
    trusted = tuple(work / name for name in TRUSTED_FOLDERS)
    return Layout(work, work / TMP_FOLDER, work / "work", trusted, work / "home", work / "identity")


def sandboxed(
    argv: list[str],
    work: Path,
    read_only: tuple[Path, ...] = (),
    user: ChildUser | None = None,
    hidden: tuple[Path, ...] = (),
    first_process: Sequence[str] = (),
) -> list[str]:
    """`argv` run inside bubblewrap with the job folder `work` and the folders `read_only` (the
    trusted kernel layer, the measurement environment's roots) mounted read-only, as `user`
    (where the runner is root: a lease of child_users()) or as the runner's user (see the module's
    docstring). UnusableEnvironment when a folder to be shown holds what a child must not see,
    or holds one of `hidden` (the repository). `first_process`: see sandbox_command."""
    return sandbox_command(argv, job_layout(work), read_only, user, hidden, first_process)


def sandbox_command(
    argv: list[str],
    layout: Layout,
    read_only: tuple[Path, ...] = (),
    user: ChildUser | None = None,
    hidden: tuple[Path, ...] = (),
    first_process: Sequence[str] = (),
) -> list[str]:
    """sandboxed() for any `layout` (a pool worker's lease folder: arena.pool.sandbox).
    `first_process`: a command that starts the rest (ending in "--"), run as the first process of
    the sandbox's PID namespace in place of bubblewrap's own (limits.Lifeline's)."""
    folders = read_only_folders(tuple(map(str, read_only)))
    refuse_exposed(folders, hidden)
    if user is None:  # unprivileged: bubblewrap's user namespace maps 65534 inside to us outside
        command = ["bwrap", "--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY]
    else:  # root: the namespaces made as root, the child run as `user` (setpriv, below)
        command = ["bwrap", *NAMESPACES]
    command += ["--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    # /tmp is a folder of the job on disk, not a tmpfs: what a candidate writes there is read and
    # bounded by the parent's watch (arena.limits), never memory no process is charged for.
    command += ["--bind", str(layout.tmp), "/tmp"]  # the caller made it
    command += shared_memory_folder()
    command += ["--ro-bind", "/sys", "/sys"]
    for device in _gpu_devices():
        command += ["--dev-bind", str(device), str(device)]
    made: set[str] = {"/", "/tmp"}
    for folder in folders:
        command += parent_folders(folder, made) + ["--ro-bind", folder, folder]
    writable = str(layout.writable)
    command += parent_folders(writable, made) + ["--bind", writable, writable]
    for trusted in map(str, layout.trusted):
        command += ["--ro-bind", trusted, trusted]
    command += ["--chdir", str(layout.start)]
    inside = list(argv)
    if user is not None:
        command += identity_files(layout.identity, user, layout.home)
        command += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        groups = ",".join(map(str, device_groups()))
        setpriv = ["setpriv", f"--reuid={user.uid}", f"--regid={user.gid}"]
        setpriv += [f"--groups={groups}" if groups else "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
        inside = [*setpriv, "--", *inside]
    if first_process:
        command += ["--as-pid-1"]
        inside = [*first_process, *inside]
    return command + ["--", *inside]


def identity_files(folder: Path, user: ChildUser, home: Path) -> list[str]:
    """bubblewrap's arguments that show, as /etc/passwd and /etc/group, the host's with `user`
    added where they lack it (written into `folder`, which only root may write): a uid of a
    lease's range is in no user database, and tools that look their user up (getpass, git,
    Node's os.userInfo) fail without an entry."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    entries = {
        "passwd": (2, user.uid, f"{IDENTITY_NAME}:x:{user.uid}:{user.gid}:arena sandbox:{home}:/usr/sbin/nologin"),
        "group": (2, user.gid, f"{IDENTITY_NAME}:x:{user.gid}:"),
    }
    arguments: list[str] = []
    for name, (column, number, line) in entries.items():
        try:
            host = Path("/etc", name).read_text()
        except OSError:
            host = ""
        numbers = {
            fields[column] for fields in (entry.split(":") for entry in host.splitlines()) if len(fields) > column
        }
        shown = (
            host if str(number) in numbers else host + ("" if host.endswith("\n") or not host else "\n") + line + "\n"
        )
        (folder / name).write_text(shown)
        (folder / name).chmod(0o644)
        arguments += ["--ro-bind", str(folder / name), f"/etc/{name}"]
    return arguments


def shared_memory_folder(size: int = SHM_BYTES) -> list[str]:
    """bubblewrap's arguments for a /dev/shm of the sandbox's own: a tmpfs every user may write
    (mode 1777, as the host's), of at most `size` bytes where bubblewrap bounds one (--size, from
    0.7.0 on; an older one makes it unbounded). Without it, bubblewrap's /dev holds /dev/shm:
    unbounded, and only its root may write there."""
    sized = ["--size", str(size)] if _has_size() else []
    return ["--perms", "1777", *sized, "--tmpfs", "/dev/shm"]


@lru_cache(maxsize=1)
def _has_size() -> bool:
    try:
        shown = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in shown.stdout + shown.stderr


def read_only_folders(extra: tuple[str, ...] = ()) -> list[str]:
    """The folders a child is shown read-only: the system folders, the toolchains and `extra`,
    each once (a folder inside another listed one is covered by it), with the folders their
    entries link to (a PEX's unzipped layout links its packages in from elsewhere). Refused
    (UnusableEnvironment) when one holds what a child must not see (refuse_exposed)."""
    tools = tuple(os.environ[name] for name in TOOL_VARIABLES if os.environ.get(name))
    return list(_read_only_folders((*SYSTEM, *tools, *extra)))


@lru_cache(maxsize=8)
def _read_only_folders(wanted: tuple[str, ...]) -> tuple[str, ...]:
    folders = [os.path.abspath(p) for p in wanted if os.path.isdir(p)]
    linked = [os.path.realpath(entry.path) for f in folders for entry in os.scandir(f) if entry.is_symlink()]
    folders += [p for p in linked if os.path.isdir(p)]
    existing = sorted({os.path.realpath(p) for p in folders} | set(folders))
    kept: list[str] = []
    for folder in existing:  # sorted: a parent comes before its children
        if not any(_inside(folder, k) for k in kept):
            kept.append(folder)
    refuse_exposed(kept)
    return tuple(kept)


def refuse_exposed(folders: Iterable[str], hidden: Iterable[Path | str] = ()) -> None:
    """UnusableEnvironment when a folder a child would be shown holds, at its top, a checkout (a
    pants.toml, a tasks/ tree of BUILD files), a runner's state or a score cache (.arena;
    scores.sqlite, scores.key, runner.sqlite there or one folder down), or holds any of `hidden` (the repository the
    tasks are read from) anywhere below it: a child would then read the exemplars, the
    references, or the cache's key. Nothing is started."""
    secret = [os.path.realpath(path) for path in hidden]
    for folder in folders:
        found = exposed_state(folder) or next((s for s in secret if _inside(s, os.path.realpath(folder))), "")
        if found:
            raise UnusableEnvironment(
                f"a harness child would be shown {folder}, which holds {found}: the sandbox shows a child only the "
                "interpreter, the arena package and its site-packages, so install arena or the measurement "
                "environment outside the repository and the runner's state (docs/harness.md, 'The OS sandbox')"
            )


def exposed_state(folder: str | Path) -> str:
    """What `folder` holds at its top that no child may see ("" for nothing)."""
    root = Path(folder)
    for name in STATE_MARKERS + STATE_FILES:
        if os.path.lexists(root / name):
            return str(root / name)
    try:
        below = [Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        below = []
    for name in STATE_FILES:
        found = next((f / name for f in below if os.path.lexists(f / name)), None)
        if found is not None:
            return str(found)
    tasks = root / "tasks"
    if tasks.is_dir() and any(_build_files(tasks)):
        return f"{tasks} (a tree of task declarations)"
    return ""


def _build_files(tasks: Path, depth: int = 3) -> Iterable[Path]:
    try:
        entries = list(os.scandir(tasks))
    except OSError:
        return
    for entry in entries:
        if entry.name == "BUILD" or entry.name.startswith("BUILD."):
            yield Path(entry.path)
        elif depth > 1 and entry.is_dir(follow_symlinks=False):
            yield from _build_files(Path(entry.path), depth - 1)


def hand_over(work: Path, user: ChildUser | None, names: Iterable[str] = WRITABLE_FOLDERS) -> None:
    """The job folder as a child running as `user` needs it: the folders `names` (and what they
    hold) owned by it, the job folder itself too (mode 0700: no other user of the host lists
    it), and everything else readable (task/ and baseline/ stay the runner's). Nothing to do
    for a child that runs as the runner's own user (`user` None)."""
    if user is None:
        return
    os.chown(work, user.uid, user.gid)
    os.chmod(work, 0o700)
    for name in TRUSTED_FOLDERS:
        readable(work / name)
    for name in names:
        give(work / name, user)


def give(root: Path, user: ChildUser) -> None:
    """`root` and all it holds owned by `user` (links themselves, never what they point to)."""
    for path in _tree(root):
        os.chown(path, user.uid, user.gid, follow_symlinks=False)


def _tree(root: Path) -> Iterable[Path]:
    """`root` and all below it; a link is itself alone (never walked: as root, a walk through a
    link to /etc handed /etc to the sandbox's user)."""
    if not root.exists() and not root.is_symlink():
        return
    yield root
    if root.is_symlink():
        return
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            yield Path(folder) / name


def readable(root: Path) -> None:
    """Readable (and folders enterable) by every user: the child's user reads these."""
    for path in _tree(root):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        wanted = mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if stat.S_ISDIR(mode) or mode & stat.S_IXUSR:
            wanted |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        if wanted != mode:
            os.chmod(path, stat.S_IMODE(wanted))


def device_groups() -> list[int]:
    """The groups owning the GPU device nodes that the world may not open (/dev/kfd and
    /dev/dri/renderD* belong to `render` or `video`): the child's user keeps those, and no other."""
    nodes = [p for p in _gpu_devices() if not p.is_dir()]
    nodes += [p for d in _gpu_devices() if d.is_dir() for p in sorted(d.iterdir())]
    groups = set()
    for node in nodes:
        try:
            mode = node.stat()
        except OSError:
            continue
        if stat.S_ISCHR(mode.st_mode) and (mode.st_mode & 0o006) != 0o006:
            groups.add(mode.st_gid)
    return sorted(groups)


def parent_folders(folder: str, made: set[str]) -> list[str]:
    """bubblewrap ops making `folder`'s missing parents enterable by every user (bubblewrap makes
    them 0700, which a child running as another user than root could not pass through)."""
    ops: list[str] = []
    parent = os.path.dirname(folder.rstrip("/"))
    chain = []
    while parent not in made and parent != os.path.dirname(parent):
        chain.append(parent)
        parent = os.path.dirname(parent)
    for path in reversed(chain):
        made.add(path)
        ops += ["--perms", "0755", "--dir", path]
    return ops


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _gpu_devices() -> list[Path]:
    return sorted(path for pattern in GPU_DEVICES for path in Path("/dev").glob(pattern))
