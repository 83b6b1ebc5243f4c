"""A worker started on the folder of one killed mid-lease removes the lease folders (input roots:
task files, candidates) that one left, and leaves a live worker's alone."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from arena.pool.worker import Worker, WorkerSettings
from arena.runner.run_folders import RUN_FOLDER_PREFIX
from arena_testing.processes import ended_process


def test_a_killed_workers_lease_folders_are_removed_when_the_next_one_starts(tmp_path: Path) -> None:
    ended, _ = ended_process()
    killed = tmp_path / f"{RUN_FOLDER_PREFIX}{ended}-abc123"  # as _run makes them
    (killed / "inputs" / "candidate").mkdir(parents=True)
    (killed / "inputs" / "candidate" / "kernel.py").write_text("pass\n")
    live = tmp_path / f"{RUN_FOLDER_PREFIX}{os.getpid()}-def456"  # a worker still running on the folder
    live.mkdir()
    said: list[str] = []
    worker = Worker(WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu", work=tmp_path), said.append)
    stop = threading.Event()
    stop.set()  # no session: serve() only starts
    try:
        worker.serve(stop)
    finally:
        worker.close()
    assert not killed.exists() and live.exists()
    assert "removed 1 lease folder(s) that workers killed mid-lease left" in said
