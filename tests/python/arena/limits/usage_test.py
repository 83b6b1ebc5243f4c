"""The readings from outside a process tree and its folders, on real processes and files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.limits.usage import folder_usage, held_deleted, memory_and_threads, process_tree, usage

HOLD = "import sys, time\n{setup}\nsys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(60)\n"


def _hold(setup: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """A Python process that does `setup`, says so, and waits to be read."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD.format(setup=setup)], stdout=subprocess.PIPE, text=True, cwd=cwd
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def _end(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait()


def test_the_tree_holds_every_descendant_and_nothing_else():
    script = "sleep 30 & sh -c 'sleep 30 & sleep 30; :' & wait"  # sh, sleep, the inner sh, its two sleeps
    process = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        for _ in range(100):  # the shells fork as they go
            tree = process_tree(process.pid)
            if len(tree) >= 5:
                break
            time.sleep(0.02)
        assert len(tree) == 5 and tree[0] == process.pid
        assert os.getpid() not in tree
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process_tree(process.pid) == []


def test_memory_and_threads_count_what_a_process_made():
    small = _hold("")
    big = _hold("import threading\nblock = b'x' * (256 << 20)\nfor _ in range(8):\n"
                "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()")  # fmt: skip
    try:
        (small_memory, small_threads), (big_memory, big_threads) = map(memory_and_threads, ([small.pid], [big.pid]))
        assert big_memory - small_memory > 200 << 20
        assert big_threads - small_threads == 8
    finally:
        _end(small)
        _end(big)


def test_a_deleted_file_held_open_still_counts(tmp_path):
    setup = "import os\nfile = open('gone', 'wb')\nos.unlink('gone')\nfile.write(b'x' * (32 << 20)); file.flush()"
    process = _hold(setup, cwd=tmp_path)
    try:
        assert list(tmp_path.iterdir()) == []
        assert held_deleted([process.pid]) >= 32 << 20
        assert usage(process.pid, [tmp_path]).disk >= 32 << 20
    finally:
        _end(process)


def test_folders_count_each_file_once_and_hide_nothing(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * (1 << 20))
    os.link(tmp_path / "a", tmp_path / "b")  # a second name is not a second file
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "inside").write_bytes(b"y" * (1 << 20))
    (tmp_path / "loop").symlink_to(tmp_path)  # not followed
    closed.chmod(0)
    try:
        allocated, entries = folder_usage([tmp_path])
    finally:
        closed.chmod(0o700)
    assert entries == 5  # a, b, closed, closed/inside, loop
    assert 2 << 20 <= allocated < 3 << 20
    assert folder_usage([tmp_path], stop_at_files=2)[1] == 3  # stops once past the limit
