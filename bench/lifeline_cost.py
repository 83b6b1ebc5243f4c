"""What the lifeline (arena/limits/lifeline.py, a sandbox's first process) adds to starting a sandbox.

Starts a bubblewrap sandbox that runs `true`, laid out as a harness child's (sandbox_command over
a job folder), with bubblewrap's own init and with the lifeline in its place, interleaved, and
prints the median and quartiles of each start's wall time and their difference.

    PYTHONPATH=src/python python3 bench/lifeline_cost.py [--starts 40] [--python /usr/bin/python3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.harness.sandbox import Layout, sandbox_command
from arena.limits.limits import Lifeline


def start_once(work: Path, python: str | None) -> float:
    """Seconds from the start of a sandbox running `true` to its end."""
    layout = Layout(work, work / "tmp", work, (), work / "home", work / "identity")
    with Lifeline() as lifeline:
        first = lifeline.prefix(python) if python else ()
        argv = sandbox_command(["true"], layout, first_process=first)
        began = time.perf_counter()
        done = subprocess.run(argv, cwd=work, pass_fds=(lifeline.fd,) if python else ())
        took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"the sandbox failed (exit {done.returncode}): {argv}")
    return took


def summary(seconds: list[float]) -> dict[str, float]:
    quartiles = statistics.quantiles(seconds, n=4)
    return {"median_ms": statistics.median(seconds) * 1000, "q1_ms": quartiles[0] * 1000, "q3_ms": quartiles[2] * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=40, help="starts of each kind (interleaved)")
    parser.add_argument("--python", default=shutil.which("python3", path="/usr/bin:/bin") or sys.executable)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    given = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "tmp").mkdir()
        start_once(work, None)  # the page cache warm for both
        start_once(work, given.python)
        plain, held = [], []
        for _ in range(given.starts):
            plain.append(start_once(work, None))
            held.append(start_once(work, given.python))
    figures = {
        "starts": given.starts,
        "python": given.python,
        "bubblewrap_init": summary(plain),
        "lifeline": summary(held),
        "added_median_ms": (statistics.median(held) - statistics.median(plain)) * 1000,
    }
    print(json.dumps(figures, indent=2))
    if given.json:
        given.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
