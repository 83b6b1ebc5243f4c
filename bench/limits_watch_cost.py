"""What one reading of the limits' watch costs (arena/limits/usage.py), the one a parent makes every
half second while a harness child, an agent or a pool command runs.

    PYTHONPATH=src/python python3 bench/limits_watch_cost.py [--files 1000 10000 100000] [--repeats 5]

For each size, a folder of that many small files in nested folders (as a Triton cache or a
repository's build leaves) and a tree of 20 sleeping processes: the median time of usage() over
that tree and folder, and of its two parts (the process readings: one scan of this host's /proc;
the folder walk). A walk stops past the files limit, so 100,000 (the job default) bounds it.
Then, where this host lets the runner make control groups (limits/cgroups.py), what a sandbox's
group costs to make and to remove, once per harness child, agent or pool command; and under a
root runner what leasing a sandbox's user costs (environment/users.py), once per harness child or agent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from arena.environment.probe import child_users
from arena.environment.users import lease
from arena.limits.cgroups import found
from arena.limits.limits import group_for, job_limits
from arena.limits.usage import folder_usage, held_deleted, memory_and_threads, process_tree, usage

PROCESSES = 20
PER_FOLDER = 100


def fill(root: Path, files: int) -> None:
    for n in range(files):
        folder = root / f"d{n // PER_FOLDER // PER_FOLDER}" / f"d{n // PER_FOLDER}"
        if n % PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}").write_bytes(b"x" * 100)


def median_ms(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        action()
        times.append((time.perf_counter() - begin) * 1000)
    return round(statistics.median(times), 2)


def measure(root: int, folder: Path, repeats: int) -> dict[str, float]:
    """The reading, and its two parts, over the tree under `root` and `folder`."""
    pids = process_tree(root)
    return {
        "tree": len(pids),
        "usage_ms": median_ms(lambda: usage(root, [folder]), repeats),
        "processes_ms": median_ms(lambda: (memory_and_threads(process_tree(root)), held_deleted(pids)), repeats),
        "walk_ms": median_ms(lambda: folder_usage([folder]), repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    script = " ".join(["sleep 60 &"] * (PROCESSES - 1)) + " wait"
    tree = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    time.sleep(0.5)
    host = sum(1 for entry in os.scandir("/proc") if entry.name.isdigit())
    rows = []
    try:
        for files in args.files:
            with tempfile.TemporaryDirectory() as folder:
                fill(Path(folder), files)
                rows.append({"files": files, "host_processes": host, **measure(tree.pid, Path(folder), args.repeats)})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        os.killpg(tree.pid, 9)
        tree.wait()
    users = child_users()
    if users is not None:  # a root runner: each sandbox leases a user (environment/users.py)
        pool = users
        cost = median_ms(lambda: lease(pool).release(), max(args.repeats, 50))
        print(json.dumps({"sandbox_users": users.describe(), "lease_and_release_ms": cost}))
    groups = found()
    if groups.hierarchy is None:
        print(json.dumps({"control_group": f"none: {groups.reason}"}))
        return
    lane = frozenset({min(os.sched_getaffinity(0))})
    cost = median_ms(lambda: group_for(job_limits(), lane).close(), max(args.repeats, 50))  # type: ignore[union-attr]
    print(json.dumps({"control_group": groups.hierarchy.describe(), "make_and_remove_ms": cost}))


if __name__ == "__main__":
    main()
