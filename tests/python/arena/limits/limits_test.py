"""The limits' configuration and messages, and the kernel's backstop, on this host."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.errors import ArenaError
from arena.limits.confine import OOM_FIRST
from arena.limits.limits import AGENT_VARIABLE, JOB_VARIABLE, Limits, agent_limits, confined, job_limits
from arena.limits.usage import Usage

LIMITS = Limits(processes=10, threads=50, memory=1 << 20, disk=2 << 30, files=100)


def test_an_operator_sets_some_limits_and_keeps_the_rest():
    default = job_limits({})
    given = job_limits({JOB_VARIABLE: "processes=64, disk=512M,files=10,threads=999"})
    assert (given.processes, given.disk, given.files, given.threads) == (64, 512 << 20, 10, 999)
    assert given.memory == default.memory
    assert agent_limits({AGENT_VARIABLE: "memory=2GiB"}).memory == 2 << 30
    assert agent_limits({}).disk > default.disk  # an agent's installs need more than a job's scratch


@pytest.mark.parametrize("text", ["processes", "processes=0", "disk=8X", "cores=4", "memory=-1G", "disk=1.5G"])
def test_a_malformed_setting_is_refused_with_what_it_takes(text):
    with pytest.raises(ArenaError, match=f"{JOB_VARIABLE}=.*keys disk, files, memory, processes, threads"):
        job_limits({JOB_VARIABLE: text})


def test_each_breach_says_what_and_how_much():
    assert LIMITS.breach(Usage(processes=10, threads=50, memory=1 << 20, disk=2 << 30, files=100)) == ""
    assert LIMITS.breach(Usage(11, 11, 0, 0, 0)) == "ran 11 processes, over the limit of 10"
    assert LIMITS.breach(Usage(1, 51, 0, 0, 0)) == "ran 51 threads, over the limit of 50"
    assert LIMITS.breach(Usage(1, 1, 3 << 20, 0, 0)) == "held 3.0 MiB of memory, over the limit of 1.0 MiB"
    assert LIMITS.breach(Usage(1, 1, 0, 5 << 29, 0)) == "wrote 2.5 GiB to disk, over the limit of 2.0 GiB"
    assert LIMITS.breach(Usage(1, 1, 0, 0, 101)) == "made more than 100 files, the limit"


def test_the_backstop_is_set_for_the_process_and_what_it_starts():
    code = (
        "import json, resource, subprocess\n"
        "from arena.limits.limits import Limits, confine_self\n"
        "confine_self(Limits(processes=8, threads=640, memory=1, disk=1, files=1))\n"
        "child = subprocess.run(['cat', '/proc/self/oom_score_adj'], capture_output=True, text=True).stdout\n"
        "print(json.dumps({'nproc': resource.getrlimit(resource.RLIMIT_NPROC),\n"
        "    'fsize': resource.getrlimit(resource.RLIMIT_FSIZE), 'core': resource.getrlimit(resource.RLIMIT_CORE),\n"
        "    'oom': int(child)}))\n"
    )
    seen = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert seen["oom"] == OOM_FIRST  # inherited: the OOM killer takes the sandbox's processes first
    assert seen["fsize"] == [1 << 30, 1 << 30] and seen["core"] == [0, 0]
    with open("/proc/sys/kernel/pid_max") as file:
        assert seen["nproc"] == [min(640, int(file.read()) // 4)] * 2  # the thread limit


def test_a_command_started_confined_is_that_command_with_the_backstop_set():
    read = (
        "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[0], open('/proc/self/oom_score_adj').read())"
    )
    argv = confined([sys.executable, "-c", read], Limits(processes=8, threads=640, memory=1, disk=1, files=1))
    tasks, oom = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert int(tasks) == int(argv[argv.index("--") - 1]) and int(oom) == OOM_FIRST
    missing = subprocess.run(confined(["no-such-program"], LIMITS), capture_output=True, text=True)
    assert missing.returncode != 0 and "cannot start 'no-such-program'" in missing.stderr


def test_from_a_zip_confine_runs_as_its_source(monkeypatch):
    from arena.limits import limits

    monkeypatch.setattr(limits, "CONFINE_SCRIPT", "/nowhere/arena.pex/arena/limits/confine.py")
    argv = confined([sys.executable, "-c", "print(open('/proc/self/oom_score_adj').read())"], LIMITS)
    assert argv[3] == "-c" and "def confine(" in argv[4]
    assert int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout) == OOM_FIRST


def test_the_watch_reads_every_half_second_or_less_often_when_a_reading_is_slow(monkeypatch):
    from arena.limits import limits

    clock = {"now": 0.0, "readings": 0, "cost": 0.0}

    def reading(root, folders, stop_at_files, cpus):  # the watch's reading: it takes `cost` seconds
        clock["readings"] += 1
        clock["now"] += clock["cost"]
        return Usage(1, 1, 0, 0, 0)

    monkeypatch.setattr(limits, "usage", reading)
    monkeypatch.setattr(limits.time, "monotonic", lambda: clock["now"])
    watch = limits.Watch(1, [], LIMITS)

    def readings_at(times):
        for at in times:
            clock["now"] = at
            watch.check()
        return clock["readings"]

    assert readings_at([0.0, 0.2, 0.49, 0.5, 0.9, 1.0]) == 3  # at 0, 0.5 and 1.0
    clock["cost"] = 0.1  # a tenth of a second a reading: then one a second (a tenth of a core)
    assert readings_at([2.0, 2.5, 2.9, 3.0, 3.5]) == 5  # at 2.0 and 3.0
    monkeypatch.setattr(limits, "usage", lambda *args, **kwargs: Usage(99, 99, 0, 0, 0))
    assert readings_at([9.0]) == 5 and watch.breached == "ran 99 processes, over the limit of 10"
    monkeypatch.setattr(limits, "usage", reading)
    assert readings_at([20.0]) == 5 and watch.check() == watch.breached  # the first breach stays, read no more
