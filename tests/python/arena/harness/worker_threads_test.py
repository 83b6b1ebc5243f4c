"""The worker's threads as the judge counts them (candidate_worker.CandidateWorker.left_running) and the
ones it logs but does not count (named_since_settled): a thread started after the first call that
names itself as a runtime does is counted where every thread is (settle(every_thread=True): CUDA),
and only logged elsewhere (ROCm: the known gap docs/harness.md states)."""

import subprocess
import sys
import textwrap

import pytest

from arena.harness.candidate_worker import CandidateWorker
from arena_testing.waiting import wait_until

# A process that starts one thread per line on stdin; the thread renames itself (prctl, as a
# native library would) when the line is a name, and sleeps.
_SPAWNER = textwrap.dedent("""
    import ctypes, sys, threading, time
    libc = ctypes.CDLL(None, use_errno=True)

    def sleeper(name):
        if name:
            libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
        time.sleep(3600)

    print("ready", flush=True)
    for line in sys.stdin:
        threading.Thread(target=sleeper, args=(line.strip(),), daemon=True).start()
""")


@pytest.fixture
def spawner():
    process = subprocess.Popen([sys.executable, "-c", _SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    worker = CandidateWorker.__new__(CandidateWorker)  # its counting alone, on a process of this test's
    worker.process, worker._own = process, (process.pid,)
    worker.settled_threads, worker.settled_ids, worker.settled_all = None, frozenset(), None
    yield process, worker
    process.kill()
    process.wait()


def _start(process: subprocess.Popen, name: str) -> None:  # type: ignore[type-arg]
    assert process.stdin is not None
    process.stdin.write(name.encode() + b"\n")
    process.stdin.flush()


def test_a_thread_under_the_executables_name_is_counted_and_not_logged(spawner):
    process, worker = spawner
    worker.settle()
    _start(process, "")
    wait_until(lambda: worker.left_running(), "the new thread to be counted")
    assert worker.named_since_settled() == {}


def test_a_thread_named_as_a_runtime_is_logged_not_counted(spawner):
    process, worker = spawner
    _start(process, "early-pool")  # before settle: a library's pool from the first call
    wait_until(lambda: "early-pool" in worker._thread_names().values(), "the first thread to take its name")
    worker.settle()
    _start(process, "cuda-EvtHandlr")
    found: dict[str, int] = wait_until(lambda: worker.named_since_settled(), "the renamed thread to be listed")
    assert found == {"cuda-EvtHandlr": 1}  # the one started after settle; the early pool is not
    assert worker.left_running() == ""  # the gap: not counted


def test_where_every_thread_counts_a_renamed_one_is_caught(spawner):
    process, worker = spawner
    _start(process, "early-pool")  # before settle: taken as a library's pool, as before
    wait_until(lambda: "early-pool" in worker._thread_names().values(), "the first thread to take its name")
    worker.settle(every_thread=True)
    assert worker.left_running() == ""
    _start(process, "cuda-EvtHandlr")
    # Counted from its start (under the executable's name until it renames itself), then by name.
    wait_until(lambda: "cuda-EvtHandlr" in worker._thread_names().values(), "the new thread to take its name")
    left = worker.left_running()
    assert "left 1 thread(s) running" in left and "started under other names: cuda-EvtHandlr x1" in left
