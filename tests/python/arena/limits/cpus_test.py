"""Lanes' CPU shares, their spelling, and keeping a real process's threads to them."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from arena.limits.cpus import parsed, pin, spelled, split, strays
from arena.limits.limits import Limits, Watch

LIMITS = Limits(processes=100, threads=1000, memory=1 << 40, disk=1 << 40, files=10**6)


def test_shares_are_contiguous_even_and_cover_every_cpu():
    assert split(range(8), 2) == [frozenset(range(4)), frozenset(range(4, 8))]
    assert split([0, 1, 2, 3, 4, 5, 6], 3) == [frozenset({0, 1, 2}), frozenset({3, 4}), frozenset({5, 6})]
    assert split([4, 5], 4) == [frozenset({4}), frozenset({5}), frozenset({4}), frozenset({5})]  # fewer CPUs than lanes
    with pytest.raises(ValueError):
        split([], 2)


def test_cpu_lists_are_spelled_and_read_as_the_kernel_does():
    assert spelled({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8" and parsed("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    assert parsed("3\n") == {3} and spelled(parsed("0-63")) == "0-63"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_every_thread_is_pinned_and_one_that_leaves_is_seen():
    lane = frozenset({min(os.sched_getaffinity(0))})
    every = frozenset(os.sched_getaffinity(0))
    code = (
        "import os, sys, threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"  # pinned by now: leave the lane
        f"os.sched_setaffinity(0, {set(every)!r})\n"
        "print('left', flush=True)\n"
        "time.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdin is not None
    try:
        assert process.stdout.readline() == "ready\n"
        pin([process.pid], lane)
        assert strays([process.pid], lane) == frozenset()  # both threads, the main one and the sleeper
        watch = Watch(process.pid, [], LIMITS, cpus=lane)
        assert watch.check() == ""
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.stdout.readline() == "left\n"
        assert strays([process.pid], lane) == every - lane
        time.sleep(0.6)  # the watch's next reading
        assert f"outside its lane's ({spelled(lane)})" in watch.check()
    finally:
        process.kill()
        process.wait()
