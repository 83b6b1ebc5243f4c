"""The OS sandbox around an agent (bubblewrap): the CLI an agent configuration starts, every
process it starts and the `arena mcp` server it launches run inside one.

What the agent sees, at the paths they have outside (the configuration files name them):
- writable: its workspace and its private HOME;
- read-only: the system folders (/usr, /bin, /sbin, /lib*, /etc, and the file resolv.conf links
  to where it links out of /etc), the agent program's
  installation (an npm package's whole node_modules folder, else the program's own folder) and
  that of the interpreter its `#!` line names (node), the Python that runs `arena mcp` (its
  prefixes and import path), and the folders the adapter names (the script agent's versions);
- its own /proc, a minimal /dev with a /dev/shm of its own (a tmpfs of at most 1 GiB any user
  may write: bubblewrap's /dev alone held an unbounded one), and as /tmp the tmp folder of its
  HOME (on disk, where the runner's watch counts it: arena.limits).
Nothing else: not the repository (tasks, exemplars, wrong candidates, references), the runner's
state, the score cache and its key, other workspaces, nor the runner user's HOME (its keys and
caches). A folder to be shown that holds one of those (an interpreter inside the repository
root, a CLI installed at the top of HOME) is refused, never shown; an import path entry that
holds one is left out; one of those inside a system folder is covered by an empty one.

A runner that is not root: a user namespace maps its user to uid and gid 65534 inside, so the
agent owns its workspace, and files of /etc that user could read but others could not are
masked. A runner that is root: bubblewrap makes the namespaces as root and the agent is started
through setpriv as a real unprivileged user of the host, a uid no other running sandbox has
(leased from ARENA_AGENT_USER's range for the agent's life: arena.environment.users), with no
capabilities and no groups, its workspace and HOME handed to it and its /etc/passwd naming it:
never root outside (files only root may touch stay closed to it), and the kernel's count of its
user's tasks is its own, neither another agent's nor the harness children's that judge its work.
The PID namespace has bubblewrap as its init: when the CLI exits or is killed, every process it
left dies with it. IPC, UTS and cgroup namespaces are its own too.
The network namespace is its own, with loopback alone: arena.agents.netbridge, run first inside,
carries the agent's connections to an egress proxy outside (arena.agents.egress), which opens
only its runner, its model endpoint and public hosts on 443. ARENA_AGENT_NETWORK=closed leaves out
the public hosts, =shared keeps the machine's network instead (recorded with the sandbox).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from arena.agents import netbridge
from arena.agents.adapter import Launch
from arena.agents.egress import Egress, destination
from arena.environment.users import ChildUser, Lease, Users, lease, users_from
from arena.errors import ArenaError
from arena.harness.sandbox import give, identity_files, parent_folders, shared_memory_folder
from arena.limits.limits import Lifeline

USER_VARIABLE = "ARENA_AGENT_USER"  # "FIRST-LAST" or "uid[:gid]": whom a root runner's agents run as (users.py)
SANDBOX_VARIABLE = "ARENA_AGENT_SANDBOX"  # "off": no sandbox (arena agent run then needs --allow-unisolated)
NETWORK_VARIABLE = "ARENA_AGENT_NETWORK"  # filtered (default), closed (runner and model alone) or shared
NETWORKS = ("filtered", "closed", "shared")
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
NOBODY = "65534"
USER_NAMESPACE = ("--unshare-user", "--uid", NOBODY, "--gid", NOBODY)  # a runner that is not root
# Files of /etc the network needs that may link out of it (systemd-resolved's resolv.conf links to
# /run/systemd/resolve/stub-resolv.conf): their targets are shown too, or names do not resolve.
NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf")
PROBE_TIMEOUT_S = 10.0
IDENTITY_FOLDER = ".sandbox-identity"  # in the agent's HOME: its /etc/passwd and /etc/group (root's files)


@lru_cache(maxsize=1)
def sandbox_tool() -> str:
    """ "bwrap <version>" when bubblewrap can make an agent's namespaces here (tried once), ""
    when it is missing, refused (no user namespaces), or turned off with ARENA_AGENT_SANDBOX=off."""
    if os.environ.get(SANDBOX_VARIABLE, "").strip().lower() in ("off", "0", "no", "false"):
        return ""
    if shutil.which("bwrap") is None:
        return ""
    trial = ["bwrap", *USER_NAMESPACE, *NAMESPACES, "--die-with-parent", "--ro-bind", "/", "/"]
    try:
        if subprocess.run([*trial, "true"], capture_output=True, timeout=PROBE_TIMEOUT_S).returncode != 0:
            return ""
        version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ""
    found = re.search(r"[\d.]+", version.stdout)
    return f"bwrap {found.group(0)}" if found else "bwrap"


@dataclass(frozen=True)
class AgentSandbox:
    """The sandbox every agent of one `arena agent run` starts in."""

    tool: str  # "bwrap 0.8.0, network filtered": recorded with the submissions
    hidden: tuple[str, ...]  # folders no folder shown to the agent may hold
    network: str = "filtered"  # one of NETWORKS: its own namespace out through an Egress, or the machine's
    users: Users | None = None  # whom a root runner's agents run as (None: a user namespace of its own)

    def lease(self) -> Lease | None:
        """The user one agent runs as, held until the caller releases it once the agent has
        ended; None where the runner is not root."""
        return None if self.users is None else lease(self.users)

    def wrap(
        self,
        launch: Launch,
        workspace: Path,
        home: Path,
        egress: Egress | None = None,
        user: ChildUser | None = None,
        lifeline: Lifeline | None = None,
    ) -> tuple[str, ...]:
        """The agent's command in the sandbox; its /tmp is its HOME's tmp folder (TMPDIR there too).
        Under a root runner (`user`, of a lease()) its workspace, HOME and proxy socket are
        handed to that user first. The sandbox ends with the caller when given its `lifeline`."""
        tmp = home / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        if user is not None:
            hand_over((workspace, home, *([egress.socket] if egress is not None else [])), user)
        return sandboxed(
            launch.argv, launch.env, (workspace, home), launch.read_only, self.hidden, egress, tmp=tmp, user=user,
            identity=home / IDENTITY_FOLDER, lifeline=lifeline,
        )  # fmt: skip

    def egress(self, runner: str, endpoint: str) -> Egress | None:
        """The egress proxy a run goes out through, opened to its `runner` and model `endpoint`
        (None where the network is shared); the caller closes it when the agent has ended."""
        if self.network == "shared":
            return None
        named = tuple(found for found in (destination(runner), destination(endpoint)) if found)
        return Egress(named, public=self.network == "filtered")


def agent_sandbox(hidden: Iterable[Path | str | None]) -> AgentSandbox | None:
    """The sandbox where this machine offers one; None where it does not."""
    tool = sandbox_tool()
    if not tool:
        return None
    network = os.environ.get(NETWORK_VARIABLE, "").strip().lower() or "filtered"
    if network not in NETWORKS:
        raise ArenaError(f"{NETWORK_VARIABLE}={network!r}: expected one of {', '.join(NETWORKS)}")
    users = users_from(USER_VARIABLE)
    tool += "" if users is None else f", as {users.describe()}"
    return AgentSandbox(f"{tool}, network {network}", tuple(os.path.abspath(p) for p in hidden if p), network, users)


def hand_over(places: Iterable[Path], user: ChildUser) -> None:
    """`places` and all they hold owned by `user` (links themselves, never what they point to)."""
    for place in places:
        give(place, user)


def proxied(env: Mapping[str, str], egress: Egress) -> dict[str, str]:
    """The agent's environment with the bridge's proxy as every client's HTTP(S) proxy; loopback direct."""
    proxy = f"http://127.0.0.1:{egress.proxy_port}"
    direct = "localhost,127.0.0.1,::1"
    names = {"HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "NO_PROXY": direct}
    return {**env, **names, **{k.lower(): v for k, v in names.items()}, "NODE_USE_ENV_PROXY": "1"}


def sandboxed(
    argv: tuple[str, ...],
    env: Mapping[str, str],
    writable: Iterable[Path],
    read_only: Iterable[Path | str] = (),
    hidden: Iterable[Path | str] = (),
    egress: Egress | None = None,
    *,
    tmp: Path,
    user: ChildUser | None = None,
    identity: Path | None = None,
    lifeline: Lifeline | None = None,
) -> tuple[str, ...]:
    """`argv` inside bubblewrap, in the first of `writable` (the workspace), with `env` as its
    environment (bubblewrap passes its own on). `hidden`: folders no folder shown may hold.
    `egress`: a network namespace of its own, `argv` run behind the bridge to that proxy. `tmp`:
    a folder on disk shown as /tmp (never a tmpfs: memory no process is charged for). `user`: whom
    a root runner starts it as (setpriv), instead of a user namespace's 65534, with its user
    database entry written into `identity` (a folder of its HOME's by default). `lifeline`: the
    sandbox's PID namespace ends when the caller, who keeps its write end, does (limits.Lifeline)."""
    writable = [Path(os.path.abspath(path)) for path in writable]
    program = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise ArenaError(f"cannot start the agent {argv[0]!r}: not found on its PATH")
    program = os.path.abspath(program)
    shown, links = _installation(program)
    interpreter = _interpreter(program, env)
    if interpreter:
        more, more_links = _installation(interpreter)
        shown, links = shown + more, links + more_links
    secret = [os.path.realpath(path) for path in hidden]
    # An import path entry that holds a hidden folder (the working directory `python -m` puts
    # first) is left out; the interpreter, the programs and the adapter's folders are refused.
    imports = [path for path in import_path() if not _holds(path, secret)]
    shown += [*interpreter_folders(), *(os.path.abspath(path) for path in read_only)]
    folders = _outermost([*shown, *imports])
    _refuse_holders([*folders, *map(str, writable)], secret)
    command = ["bwrap", *(USER_NAMESPACE if user is None else ()), *NAMESPACES, "--die-with-parent"]
    command += ["--unshare-net"] if egress is not None else []
    made = {"/", "/tmp"}  # the folders made inside to hold what is shown: enterable by the agent's user
    command += ["--proc", "/proc", "--dev", "/dev", *shared_memory_folder()]  # bounded, writable
    command += ["--bind", os.path.abspath(tmp), "/tmp", *_system_view(folders, secret)]
    for folder in folders:
        if not _covered(folder, SYSTEM):
            command += [*parent_folders(folder, made), "--ro-bind", folder, folder]
    for target, link in links:
        if not _covered(link, [*folders, *SYSTEM]):  # a link on PATH to the installation (~/.local/bin/x)
            command += [*parent_folders(link, made), "--symlink", target, link]
    for place in writable:
        command += [*parent_folders(str(place), made), "--bind", str(place), str(place)]
    command += ["--chdir", str(writable[0])]
    if egress is not None:
        command += [*parent_folders(str(egress.socket), made), "--bind", str(egress.socket), str(egress.socket)]
    home = Path(env.get("HOME", str(tmp.parent)))
    options, before = _first_processes(user, lifeline, identity or tmp.parent / IDENTITY_FOLDER, home)
    front = [] if egress is None else bridge(egress, imports)
    return (*command, *options, "--", *before, *front, program, *argv[1:])


def _system_view(folders: list[str], secret: list[str]) -> list[str]:
    """The system folders read-only, /etc's private files masked, the network files that link out
    of /etc, and an empty folder over a `secret` one that lies under them."""
    view: list[str] = []
    for folder in SYSTEM:
        if os.path.islink(folder):  # a merged /usr: /bin -> usr/bin
            view += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            view += ["--ro-bind", folder, folder]
    view += _masked("/etc")
    for target in linked_out(NETWORK_FILES, [*SYSTEM, *folders]):
        view += ["--ro-bind", target, target]
    for path in secret:  # a checkout or a state folder under /usr or /etc: an empty folder there
        if os.path.isdir(path) and _covered(path, [folder for folder in SYSTEM if not os.path.islink(folder)]):
            view += ["--tmpfs", path, "--remount-ro", path]
    return view


def _first_processes(
    user: ChildUser | None, lifeline: Lifeline | None, identity: Path, home: Path
) -> tuple[list[str], list[str]]:
    """bubblewrap's options and the commands that run before the agent's, each up to its "--":
    the `lifeline`'s end as the namespace's first process (in bubblewrap's place; run by this
    interpreter, whose folders are shown), then, under a root runner, setpriv as `user` (no
    capabilities, no groups: root made the namespaces), named in the /etc/passwd it sees
    (entries written into `identity`)."""
    options: list[str] = []
    before: list[str] = []
    if lifeline is not None:
        options += ["--as-pid-1"]
        before += lifeline.prefix(os.path.realpath(sys.executable))
    if user is not None:
        options += [*identity_files(identity, user, home), "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        before += ["setpriv", f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--inh-caps=-all"]
        before += ["--bounding-set=-all", "--"]
    return options, before


def bridge(egress: Egress, imports: list[str]) -> list[str]:
    """The command that runs first in the sandbox (arena.agents.netbridge), up to the program's
    own: with the import path spelled out, so the agent's environment stays as its adapter made it."""
    code = f"import sys; sys.path[:0] = {imports!r}; from {netbridge.__name__} import main; main()"
    forwards = [
        f"--forward=[{host}]:{port}" if ":" in host else f"--forward={host}:{port}" for host, port in egress.forwards()
    ]
    return [sys.executable, "-I", "-c", code, str(egress.socket), str(egress.proxy_port), *forwards, "--"]


def linked_out(files: Iterable[str], shown: Iterable[str]) -> list[str]:
    """The real files that `files` link to outside the folders `shown` (each once)."""
    folders = list(shown)
    targets = {os.path.realpath(path) for path in files if os.path.islink(path) and os.path.exists(path)}
    return sorted(target for target in targets if not _covered(target, folders))


def interpreter_folders() -> list[str]:
    """The Python that runs `arena mcp` (and the built-in and script agents): its prefixes."""
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    return [path for path in wanted if os.path.isdir(path)]


def import_path() -> list[str]:
    """Its import path (what the agent's PYTHONPATH names), and what the entries link to (a PEX's
    venv links its packages in from elsewhere)."""
    folders = [path for path in (os.path.abspath(entry) for entry in sys.path if entry) if os.path.isdir(path)]
    for folder in [*folders, *interpreter_folders()]:
        folders += [os.path.realpath(entry.path) for entry in os.scandir(folder) if entry.is_symlink()]
    return [path for path in folders if os.path.exists(path)]


def _installation(program: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The folder to show for `program` (its real file's node_modules folder, else that file's
    folder), and the link (target, path) that keeps `program`'s own path working."""
    real = os.path.realpath(program)
    parts = Path(real).parts
    top = parts.index("node_modules") + 1 if "node_modules" in parts else len(parts) - 1
    links = [(real, program)] if real != program else []
    return [str(Path(*parts[:top]))], links


def _interpreter(program: str, env: Mapping[str, str]) -> str | None:
    """The program a script's `#!` line runs (`#!/usr/bin/env node`: node, found on the agent's PATH)."""
    try:
        with open(program, "rb") as file:
            line = file.readline(512)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = [word for word in line[2:].decode(errors="replace").split() if not word.startswith("-")]
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        found = shutil.which(words[1], path=env.get("PATH", os.defpath))
        return os.path.abspath(found) if found else None
    return words[0] if words and os.path.isabs(words[0]) else None


def _outermost(paths: Iterable[str]) -> list[str]:
    """Each path once, and none that another of them already covers."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(path) for path in paths}):  # a parent sorts before its children
        if not _covered(path, kept):
            kept.append(path)
    return kept


def _covered(path: str, folders: Iterable[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _holds(folder: str, secret: list[str]) -> list[str]:
    """The hidden folders (real paths) `folder` is or holds ("/" holds everything)."""
    real = os.path.realpath(folder)
    return ["/"] if real == "/" else [path for path in secret if _covered(path, [real])]


def _refuse_holders(shown: Iterable[str], secret: list[str]) -> None:
    """ArenaError when a folder to be shown is, or holds, one that must stay hidden."""
    for folder in shown:
        held = _holds(folder, secret)
        if held:
            raise ArenaError(
                f"the agent's sandbox would show {folder}, which holds {held[0]}: "
                "install the agent and the interpreter elsewhere, or keep that folder off the import path"
            )


@lru_cache(maxsize=1)
def _masked_entries(root: str) -> tuple[tuple[str, bool], ...]:
    """(path, is a folder) below `root` that this user may read but others may not."""
    found: list[tuple[str, bool]] = []
    for folder, names, files in os.walk(root):
        for name in [*names, *files]:
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            folder_like = stat.S_ISDIR(mode)
            others = stat.S_IROTH | (stat.S_IXOTH if folder_like else 0)
            if not stat.S_ISLNK(mode) and mode & others != others and os.access(path, os.R_OK):
                found.append((path, folder_like))
                if folder_like:
                    names.remove(name)  # hidden whole: no need to look inside
    return tuple(found)


def _masked(root: str) -> list[str]:
    """bubblewrap's arguments that hide those entries: an empty tmpfs over a folder, /dev/null over a file."""
    command: list[str] = []
    for path, folder_like in _masked_entries(root):
        command += ["--tmpfs", path, "--remount-ro", path] if folder_like else ["--ro-bind", "/dev/null", path]
    return command
