"""Whom a root runner's sandboxes run as: each a user of its own.

The kernel keeps some counts per user, not per sandbox: RLIMIT_NPROC counts every task of a uid
on the host (a root runner's sandboxes share its initial user namespace). Sandboxes run as one uid
share that count: a candidate holding its thread limit less one left every other sandbox of the
same uid unable to start a thread, so another agent's judge failed in its setup (a fault, retried)
or its candidate was charged (planted: tests/python/arena/environment/users_test.py). Control
groups bound each sandbox's tasks, but the kernel still applies the per-user count beside them.

So each harness child and each agent of a root runner runs as a uid that no other running
sandbox of this host has: leased from a range for as long as its sandbox lives. A lease is an
exclusive lock on the file /run/arena-users/<uid> (flock: two runners of one host never hold the same uid,
and a dead runner's locks go with its process); a uid that some process still runs as (a sandbox
being killed, a host user inside a badly chosen range) is passed over.

The range: ARENA_SANDBOX_USER for harness children, ARENA_AGENT_USER for agents (both lease from
the same locks, so an agent never shares a uid with a child judging its work). "FIRST-LAST", each
uid with a group of the same number; unset, DEFAULT_RANGE, a part of 1879048192-2147483647, the
range systemd leaves unused (systemd.io/UIDS-GIDS). "uid[:gid]" names one user every sandbox of
that kind shares, counts and all.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.errors import UnusableEnvironment

DEFAULT_RANGE = (0x7F000000, 0x7F00FFFF)  # 2130706432-2130771967: 65,536 uids
# One lock file a uid, in the first of these root can keep to itself (every runner of a host
# tries them in this order, so they agree): /run where it exists, else the temporary folder.
LOCKS = (Path("/run/arena-users"), Path(tempfile.gettempdir(), "arena-users-root"))
HIGHEST_UID = 4294967294  # (uid_t) -1 is no uid


@dataclass(frozen=True)
class ChildUser:
    """An unprivileged user of the host a root runner's sandbox runs as, outside it too."""

    uid: int
    gid: int


@dataclass(frozen=True)
class Users:
    """The users a root runner's sandboxes of one kind run as: first..last, each its own (a
    lease apiece), or one user they all share (`shared`)."""

    first: int
    last: int
    gid: int | None = None  # the shared user's group; None: each uid's group has its number
    shared: bool = False

    def describe(self) -> str:
        if self.shared:
            return f"uid {self.first} (shared)"
        return f"a uid of its own of {self.first}-{self.last}"


class Lease:
    """One user held for one sandbox, until release() (idempotent)."""

    def __init__(self, user: ChildUser, lock: int | None) -> None:
        self.user = user
        self._lock = lock  # None: a shared user, held by nobody

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # the lock goes with its last descriptor
            self._lock = None


def users_from(variable: str) -> Users | None:
    """The users `variable` names ("FIRST-LAST", "uid[:gid]", or unset: DEFAULT_RANGE) when
    this process is root; None when it is not (its sandboxes run as its own user, each in a user
    namespace of its own, where the kernel counts their tasks apart). Root or a malformed value
    is refused (UnusableEnvironment)."""
    if os.geteuid() != 0:
        return None
    text = os.environ.get(variable, "").strip()
    try:
        users = _parsed(text)
    except ValueError:
        users = None
    if users is None or users.first <= 0 or (users.gid is not None and users.gid <= 0) or users.last > HIGHEST_UID:
        raise UnusableEnvironment(
            f"{variable}={text!r} does not name unprivileged users: FIRST-LAST (a uid of its own for"
            " each sandbox) or uid[:gid] (one user they share)"
        )
    return users


def _parsed(text: str) -> Users | None:
    if not text:
        return Users(*DEFAULT_RANGE)
    if "-" in text:
        first, _, last = text.partition("-")
        low, high = int(first), int(last)
        return Users(low, high) if low <= high else None
    uid, _, gid = text.partition(":")
    return Users(int(uid), int(uid), int(gid) if gid else int(uid), shared=True)


def lease(users: Users, locks: Path | tuple[Path, ...] | None = None) -> Lease:
    """A user of `users` no other running sandbox holds (the shared one for a shared `users`),
    held until its release(); its lock in the first of `locks` that can be kept (LOCKS).
    UnusableEnvironment when every uid of the range is held or run, or no lock can be kept."""
    if users.shared:
        return Lease(ChildUser(users.first, users.gid or users.first), None)
    folder = _lock_folder(LOCKS if locks is None else locks)
    running: set[int] | None = None  # read once, after the first lock taken (a /proc scan: ~2 ms)
    for uid in range(users.first, users.last + 1):
        if running is not None and uid in running:
            continue
        lock = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(lock)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue  # another sandbox's
            raise
        running = _running_uids() if running is None else running
        if uid in running:  # a sandbox of this uid ended just now and is still dying
            os.close(lock)
            continue
        return Lease(ChildUser(uid, uid), lock)
    raise UnusableEnvironment(f"every uid of {users.first}-{users.last} is held by a running sandbox")


def check_users(users: Users | None) -> None:
    """One lease taken and given back: a command that starts sandboxes (serve, a pool worker)
    refuses at its start a lock folder it cannot keep, not at every sandbox."""
    if users is not None:
        lease(users).release()


def _lock_folder(locks: Path | tuple[Path, ...]) -> Path:
    """The first of `locks` that can be made (root's alone, when missing); a folder another user
    could have placed files in (a link, a folder of another owner, or one others may write) is
    refused, never passed over: runners that passed it over would disagree."""
    reasons = []
    for folder in (locks,) if isinstance(locks, Path) else locks:
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            seen = os.lstat(folder)
        except OSError as error:
            reasons.append(f"{folder}: {error.strerror}")
            continue
        if not os.path.isdir(folder) or os.path.islink(folder) or seen.st_uid != 0 or seen.st_mode & 0o022:
            raise UnusableEnvironment(
                f"{folder} must be a folder only root may write, to hold the sandboxes' user leases"
            )
        return folder
    raise UnusableEnvironment(f"cannot keep the sandboxes' user leases: {'; '.join(reasons)}")


def _running_uids() -> set[int]:
    """The real uids of this host's processes (what RLIMIT_NPROC counts)."""
    uids: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as status:
                for line in status:
                    if line.startswith("Uid:"):
                        uids.add(int(line.split()[1]))
                        break
        except (OSError, ValueError, IndexError):
            continue  # ended while read
    return uids
