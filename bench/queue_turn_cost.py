"""What choosing the next job by turn costs on a long-lived runner's state (runner/queue.py NEXT_JOB, PLACE_IN_LINE).

    PYTHONPATH=src/python python3 bench/queue_turn_cost.py [--history 20000] [--repeats 5]

An in-memory copy of the runner's schema with four agents of `--history` finished jobs each, three
of them with 16 jobs waiting and an operator with 200: the median time of the query a lane runs to
claim its next job, and of the one that tells a waiting stream its place in line.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time

from arena.runner.database import SCHEMA
from arena.runner.queue import NEXT_JOB, PLACE_IN_LINE

WAITING = {"alice": 16, "bob": 16, "carol": 16, "ops": 200}


def state(history: int) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    rows, clock = [], 1_000_000
    for agent in WAITING:
        for i in range(history):
            clock += 10
            rows.append((f"{agent}-{i}", agent, "done", clock, clock + 5))
    for agent, count in WAITING.items():
        for i in range(count):
            clock += 10
            rows.append((f"{agent}-waiting-{i}", agent, "pending", clock, 0))
    conn.executemany(
        "INSERT INTO jobs (id, agent, attempt, task, candidate, state, created_ms, finished_ms)"
        " VALUES (?, ?, 'a', 'task', '{}', ?, ?, ?)",
        rows,
    )
    return conn


def timed(conn: sqlite3.Connection, query: str, parameters: tuple[object, ...], repeats: int) -> float:
    spent = []
    for _ in range(repeats):
        began = time.perf_counter()
        conn.execute(query, parameters).fetchall()
        spent.append((time.perf_counter() - began) * 1000)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    conn = state(args.history)
    (seq,) = conn.execute("SELECT seq FROM jobs WHERE id = 'ops-waiting-150'").fetchone()
    print(f"{len(WAITING) * args.history} finished jobs, {sum(WAITING.values())} waiting")
    print(f"claim the next job: {timed(conn, NEXT_JOB, (), args.repeats):.1f} ms (median of {args.repeats})")
    print(f"a stream's place in line: {timed(conn, PLACE_IN_LINE, ('ops-waiting-150', seq), args.repeats):.1f} ms")


if __name__ == "__main__":
    main()
