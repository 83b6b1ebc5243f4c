# Attack: use the runner's privileges. Run as root, the runner used to start its children in a
# user namespace whose uid 65534 was root outside: a candidate could read every file root can in
# what the sandbox shows (/etc/shadow). The candidate reads /etc/shadow and reports its uid, inside
# and as its user namespace maps it outside, in the error it raises.
# Expected: RUNTIME_ERROR with shadow=denied and no uid 0 anywhere: a root runner starts its
# children through setpriv as an unprivileged user of the host (sandbox.py), which the parent
# sees in /proc too. A runner that is not root runs them as itself, unprivileged as well.

import os
import re
from functools import partial

import pytest

from arena.environment.probe import sandbox_tool
from arena_testing.processes import harness_processes
from arena_testing.waiting import wait_until

pytestmark = pytest.mark.skipif(not sandbox_tool(), reason="no OS sandbox on this machine (bubblewrap)")

PROBE = """
import os
import pwd

_sys = getattr(os, "sy" + "s")
_open = getattr(_sys.modules["builti" + "ns"], "op" + "en")


def _shadow():
    try:
        _open("/etc/" + "shadow").read()
        return "read"
    except PermissionError:
        return "denied"
    except FileNotFoundError:
        return "absent"


def _outside(inside):
    for line in _open("/proc/self/uid_map").read().splitlines():
        first, lower, count = map(int, line.split())
        if first <= inside < first + count:
            return lower + inside - first
    return -1


def _name():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return "unknown"


REPORT = f"shadow={_shadow()} uid_inside={os.getuid()} uid_outside={_outside(os.getuid())} name={_name()}"


def add(x, y):
    raise RuntimeError(REPORT)
"""


def _report(result) -> dict[str, str]:
    found = re.search(r"shadow=(\w+) uid_inside=(-?\d+) uid_outside=(-?\d+) name=(\S+)", " ".join(result.errors))
    assert found, result.errors
    return dict(zip(("shadow", "inside", "outside", "name"), found.groups()))


def test_the_candidate_holds_no_privilege(run_candidate):
    result = run_candidate(PROBE)
    assert result.status == "RUNTIME_ERROR", result.errors
    report = _report(result)
    assert report["shadow"] in ("denied", "absent"), report
    assert report["inside"] != "0" and report["outside"] not in ("0", "-1"), report
    assert report["name"] != "unknown", report  # a leased uid is named in its sandbox's /etc/passwd


@pytest.mark.skipif(os.geteuid() != 0, reason="the control needs a root runner")
def test_without_the_sandbox_a_root_runners_candidate_reads_shadow(run_candidate, monkeypatch):
    # The control: the probe works. Unsandboxed, a root runner's child is root.
    from arena.harness import launch

    monkeypatch.setattr(launch, "sandbox_tool", lambda: "")
    report = _report(run_candidate(PROBE))
    assert report["shadow"] == "read" and report["inside"] == "0", report


def _judge_and_worker(root: int) -> dict[int, tuple[str, int]] | None:
    found = harness_processes(root)
    started = any("arena.harness.worker" in command for command, _ in found.values())
    return found if started and len(found) >= 2 else None


def test_the_judge_and_its_worker_are_unprivileged_outside_the_sandbox():
    from arena.harness.launch import Child

    child = Child()
    try:
        # The worker is started first thing: wait for the judge and the worker's processes.
        seen = wait_until(lambda: _judge_and_worker(child.process.pid), "the judge and its worker")
        expected = child.user.uid if child.user is not None else os.getuid()
        assert {uid for _, uid in seen.values()} == {expected}, seen
    finally:
        child.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a runner that is not root gives each child a user namespace")
def test_children_at_once_run_as_users_of_their_own():
    # RLIMIT_NPROC counts a user's tasks host-wide: children sharing a uid share that count, and
    # one candidate holding its limit left the other's judge unable to start a thread
    # (tests/python/arena/environment/users_test.py shows the kernel's side).
    from arena.harness.launch import Child

    children = [Child(), Child()]
    try:
        seen = [
            wait_until(partial(_judge_and_worker, child.process.pid), "the judge and its worker") for child in children
        ]
        uids = [{uid for _, uid in found.values()} for found in seen]
        leased = [child.user.uid if child.user is not None else None for child in children]
        assert None not in leased and uids == [{leased[0]}, {leased[1]}] and leased[0] != leased[1], (uids, leased)
    finally:
        for child in children:
            child.close()
