"""What a pool worker's sandbox costs a command (arena/pool/sandbox.py): the wall of one trivial
command through the worker's own path (Worker._run_command: the limits' watch, confine.py, and
bubblewrap with a leased user under root) against the same command in unshare's namespaces alone,
the way before session 27.

    PYTHONPATH=src/python python3 bench/pool_command_cost.py [--repeats 20]

Prints one JSON line a way: the median, minimum and maximum wall in ms. The command is
`python3 -c pass` found on this interpreter's folder (the action's PATH names it, as the
pool's tests do): what a harness child's start pays before it imports anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.environment.probe import sandbox_tool
from arena.pool import worker
from arena.pool.worker import Run, Worker, WorkerSettings
from arena.reapi.cas import reapi_protos


def once(work: Worker) -> float:
    pb = reapi_protos()[0]
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    command = pb.Command(
        arguments=["python3", "-c", "pass"],
        environment_variables=[pb.Command.EnvironmentVariable(name="PATH", value=path)],
    )
    with tempfile.TemporaryDirectory(prefix="arena-bench-lease-") as folder:
        root = Path(folder)
        (root / "root").mkdir()
        begin = time.perf_counter()
        code, _ = work._run_command(Run("bench", None), command, root / "root", root, limit=60)
        took = (time.perf_counter() - begin) * 1000.0
    if code != 0:
        raise SystemExit(f"the command failed ({code}): {(root / 'stderr').read_text()[-500:]}")
    return took


def measure(repeats: int) -> dict[str, float]:
    work = Worker(WorkerSettings(server="127.0.0.1:1", gpu="cpu", gpu_name="cpu"))  # no call reaches a server
    try:
        once(work)  # warm: the interpreter's folders asked once, pages cached
        walls = [once(work) for _ in range(repeats)]
    finally:
        work.close()
    return {
        "median_ms": round(statistics.median(walls), 1),
        "min_ms": round(min(walls), 1),
        "max_ms": round(max(walls), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    tool = sandbox_tool()
    if not tool:
        raise SystemExit("no bubblewrap here: nothing to compare")
    print(json.dumps({"way": f"sandboxed ({tool})", **measure(args.repeats)}), flush=True)
    worker.sandbox_tool = lambda: ""  # type: ignore[assignment]  # the way before: unshare alone
    print(json.dumps({"way": "unshare's namespaces only", **measure(args.repeats)}), flush=True)


if __name__ == "__main__":
    main()
