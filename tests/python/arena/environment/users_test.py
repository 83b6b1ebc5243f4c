"""Users of their own for a root runner's sandboxes (arena.environment.users)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.environment import users
from arena.environment.users import ChildUser, Users, lease, users_from
from arena.errors import UnusableEnvironment
from arena_testing.waiting import wait_until

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner picks its sandboxes' users")
VARIABLE = "ARENA_TEST_USERS"


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    if os.geteuid() != 0:
        pytest.skip("the lease folder must be root's")
    return folder


@root_only
@pytest.mark.parametrize(
    "given, expected",
    [
        ("", Users(*users.DEFAULT_RANGE)),
        ("100000-100009", Users(100000, 100009)),
        ("65534", Users(65534, 65534, 65534, shared=True)),
        ("4000:5000", Users(4000, 4000, 5000, shared=True)),
    ],
)
def test_the_variable_names_a_range_or_one_shared_user(monkeypatch, given, expected):
    monkeypatch.setenv(VARIABLE, given)
    assert users_from(VARIABLE) == expected


@root_only
@pytest.mark.parametrize("given", ["0", "0:0", "0-10", "10-5", "agent", "65533:-1", "1-4294967295", "x-y"])
def test_root_or_a_malformed_value_is_refused(monkeypatch, given):
    monkeypatch.setenv(VARIABLE, given)
    with pytest.raises(UnusableEnvironment, match=f"{VARIABLE}=.*does not name unprivileged users"):
        users_from(VARIABLE)


def test_a_runner_that_is_not_root_picks_no_user(monkeypatch):
    monkeypatch.setattr(users.os, "geteuid", lambda: 1000)
    monkeypatch.setenv(VARIABLE, "0")  # not even read
    assert users_from(VARIABLE) is None


def test_the_default_range_is_one_systemd_leaves_unused():
    first, last = users.DEFAULT_RANGE
    assert 1879048192 <= first <= last <= 2147483647 and last - first + 1 == 65536


def test_running_sandboxes_never_share_a_user_and_a_released_one_is_leased_again(locks):
    pool = Users(3000000, 3000002)
    held = [lease(pool, locks) for _ in range(3)]
    assert [h.user for h in held] == [
        ChildUser(3000000, 3000000),
        ChildUser(3000001, 3000001),
        ChildUser(3000002, 3000002),
    ]
    with pytest.raises(UnusableEnvironment, match="every uid of 3000000-3000002 is held"):
        lease(pool, locks)
    held[1].release()
    held[1].release()  # idempotent
    again = lease(pool, locks)
    assert again.user.uid == 3000001
    for h in (held[0], held[2], again):
        h.release()


def test_the_first_lease_folder_that_can_be_made_holds_the_locks(tmp_path, locks):
    missing = tmp_path / "no" / "such" / "folder"  # /run absent: its parent cannot be made
    held = lease(Users(3050000, 3050001), (missing, locks))
    assert held.user.uid == 3050000 and (locks / "3050000").exists() and not missing.exists()
    held.release()
    with pytest.raises(UnusableEnvironment, match="cannot keep the sandboxes' user leases: .*no/such/folder"):
        lease(Users(3050000, 3050001), (missing,))


def test_a_shared_user_is_handed_to_every_sandbox(locks):
    pool = Users(65534, 65534, 65533, shared=True)
    first, second = lease(pool, locks), lease(pool, locks)
    assert first.user == second.user == ChildUser(65534, 65533)
    assert not any(locks.iterdir())  # no lock: nobody holds it


HOLDER = """
import fcntl, os, sys
lock = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_uid_another_runner_holds_is_passed_over(locks):
    # Another runner of the host: its lock is a file of the same folder, held by another process.
    other = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(locks / "3100000")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        held = lease(Users(3100000, 3100001), locks)
        assert held.user.uid == 3100001
        held.release()
    finally:
        other.communicate("")
    held = lease(Users(3100000, 3100001), locks)  # its runner gone, its lock with it
    assert held.user.uid == 3100000
    held.release()


def test_a_uid_some_process_still_runs_as_is_passed_over(locks):
    # A sandbox of that uid still dying, or a host user inside a badly chosen range.
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("util-linux setpriv missing")
    alive = subprocess.Popen([setpriv, "--reuid=3200000", "--regid=3200000", "--clear-groups", "sleep", "30"])
    try:
        wait_until(lambda: "\t3200000\t" in Path(f"/proc/{alive.pid}/status").read_text(), "the user's process")
        held = lease(Users(3200000, 3200001), locks)
        assert held.user.uid == 3200001
        held.release()
    finally:
        alive.kill()
        alive.wait()


@pytest.mark.parametrize("make", ["others_write", "link", "not_roots"])
def test_a_lease_folder_others_could_have_written_is_refused(tmp_path, locks, make):
    folder = tmp_path / "shared"
    if make == "others_write":
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
    elif make == "link":
        folder.symlink_to(locks)
    else:
        folder.mkdir(mode=0o700)
        os.chown(folder, 1000, 1000)
    with pytest.raises(UnusableEnvironment, match="only root may write"):
        lease(Users(3300000, 3300001), folder)


# The attack the leases close. RLIMIT_NPROC counts every task of a uid on the host: a process
# holding its limit less a few leaves another of the same uid unable to start a thread. Shown
# here with plain processes as a root runner's sandboxes run (setpriv to the user, the limit set
# before): with one shared uid the second is refused; with a uid of its own it is not.
HOLD_THREADS = """
import sys, threading
for _ in range(int(sys.argv[1])):
    threading.Thread(target=threading.Event().wait, daemon=True).start()
print("holding", flush=True)
sys.stdin.read()
"""
START_THREADS = textwrap.dedent("""
    import sys, threading
    started = 0
    try:
        for _ in range(int(sys.argv[1])):
            threading.Thread(target=threading.Event().wait, daemon=True).start()
            started += 1
    except RuntimeError:
        pass
    print(started)
""")
LIMIT = 64


def _as(user: int, code: str, *args: str, **popen) -> subprocess.Popen:
    limit = ["prlimit", f"--nproc={LIMIT}"]
    setpriv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    return subprocess.Popen([*limit, *setpriv, sys.executable, "-I", "-c", code, *args], text=True, **popen)


@root_only
def test_a_sandbox_of_its_own_user_keeps_its_tasks_when_another_holds_its_limit(locks):
    if not (shutil.which("setpriv") and shutil.which("prlimit")):
        pytest.skip("util-linux setpriv and prlimit needed")
    pool = Users(3400000, 3400009)
    first, second = lease(pool, locks), lease(pool, locks)
    try:
        holder = _as(first.user.uid, HOLD_THREADS, str(LIMIT - 8), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
            shared = _as(first.user.uid, START_THREADS, "32", stdout=subprocess.PIPE)
            own = _as(second.user.uid, START_THREADS, "32", stdout=subprocess.PIPE)
            assert int(shared.communicate(timeout=60)[0]) < 8  # the attack, with one user for both
            assert int(own.communicate(timeout=60)[0]) == 32  # a lease of its own: untouched
        finally:
            holder.communicate("", timeout=60)
    finally:
        first.release()
        second.release()
