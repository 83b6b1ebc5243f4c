"""Runner latency and throughput over loopback (127.0.0.1), on this machine.

1. Cached score: an Evaluate whose score is already in the score cache, through everything a
   real request meets: gRPC, auth, the durable queue (fsync on), a lane worker, the real
   arena.evaluation.evaluate (task digest, cache key, SQLite lookup) and the stream back.
   Each request is a new job (a new attempt), so no request is answered by an earlier job.
2. Queue throughput: jobs from concurrent clients with an instant fake evaluate, 2 lanes.

Run: PYTHONPATH=src/python python bench/runner_latency.py [--requests 300] [--write bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from arena.api.server import create_server
from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate
from arena.client.client import Client
from arena.evaluation.evaluate import evaluate
from arena.evaluation.evaluation import Evaluation, Status
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.runner.auth import Tokens, parse_tokens
from arena.runner.runner import Runner
from arena.task.load import load_tasks

TASK = "tasks/triton2triton/scale:scale"
BUILD = """
kernel_task(
    name="scale",
    category="triton2triton",
    description="y = 2 * x",
    baseline=["kernel.py"],
    entry="kernel.py:scale",
    signature="scale(x: [N] float32) -> [N] float32",
    reference="reference.py:scale",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["N"], "dtype": "float32"}],
    outputs=[{"name": "y", "shape": ["N"], "dtype": "float32"}],
    cases=[{"name": "big", "dims": {"N": 1000000}, "dtype": "float32", "seed": 6, "timed": True}],
    iterations=1000000,
)
"""
KERNEL = b"def scale(x):\n    return x * 2  # candidate\n"


def write_repo(root: Path) -> Path:
    task_dir = root / "tasks" / "triton2triton" / "scale"
    task_dir.mkdir(parents=True)
    (root / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(BUILD)
    (task_dir / "kernel.py").write_text("def scale(x):\n    return x * 2\n")
    (task_dir / "reference.py").write_text("def scale(x):\n    return x * 2\n")
    return root


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure_cached_score(root: Path, requests: int) -> dict[str, float]:
    repo = write_repo(root / "repo")
    task = load_tasks(repo)[0]
    store = SqliteStore(root / "scores.sqlite")
    settings = HarnessSettings(backend="cpu")
    candidate = Candidate(TASK, {"kernel.py": KERNEL})
    # Seed the cache once with a stand-in harness; every later evaluate() is a cache hit.
    seeded = evaluate(
        task, candidate, repo, settings, store, runner=lambda *_: HarnessResult("PASSED", True, True)
    )
    assert seeded.status is Status.PASSED and not seeded.cached
    runner = Runner(repo, root / "state", evaluate, settings=settings, store=store, tasks=(task,)).start()
    server, port = create_server("127.0.0.1:0", runner, Tokens(parse_tokens("bench:bench-token")))
    server.start()
    latencies_ms: list[float] = []
    try:
        with Client(f"127.0.0.1:{port}", "bench-token") as client:
            for index in range(requests + 20):
                attempt = client.open_attempt(TASK)
                started = time.perf_counter()
                result = client.evaluate(candidate, attempt.id)
                elapsed_ms = (time.perf_counter() - started) * 1000
                assert result.cached
                if index >= 20:  # warm-up: connections, first SQLite pages
                    latencies_ms.append(elapsed_ms)
    finally:
        server.stop(0).wait(5)
        runner.stop()
    return {
        "requests": requests,
        "p50_ms": statistics.median(latencies_ms),
        "p99_ms": percentile(latencies_ms, 0.99),
        "max_ms": max(latencies_ms),
    }


def instant_evaluation(task, candidate, repo_root, settings, store) -> Evaluation:  # noqa: ANN001
    return Evaluation("x", task.address, "", "", Status.PASSED, True, True)


def measure_throughput(root: Path, clients: int, jobs_per_client: int) -> dict[str, float]:
    repo = write_repo(root / "repo2")
    runner = Runner(
        repo, root / "state2", instant_evaluation, lanes=("0", "1"), tasks=load_tasks(repo)
    ).start()
    server, port = create_server("127.0.0.1:0", runner, Tokens(parse_tokens("bench:bench-token:operator")))
    server.start()
    errors: list[BaseException] = []

    def send(worker: int) -> None:
        try:
            with Client(f"127.0.0.1:{port}", "bench-token") as client:
                for k in range(jobs_per_client):
                    client.evaluate(Candidate(TASK, {"kernel.py": b"# %d %d\n" % (worker, k) + KERNEL}))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=send, args=(worker,)) for worker in range(clients)]
    started = time.perf_counter()
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
    finally:
        elapsed = time.perf_counter() - started
        server.stop(0).wait(5)
        runner.stop()
    if errors:
        raise errors[0]
    total = clients * jobs_per_client
    return {"clients": clients, "jobs": total, "seconds": elapsed, "jobs_per_s": total / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--jobs-per-client", type=int, default=50)
    parser.add_argument("--machine", default="2-core CPU dev machine")
    parser.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    parser.add_argument("--write", type=Path, help="append the results as a '## Runner' section to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cached = measure_cached_score(Path(folder), args.requests)
        flow = measure_throughput(Path(folder), args.clients, args.jobs_per_client)
    verdict = "meets" if cached["p99_ms"] < 20 else "misses"
    text = (
        f"\n## Runner\n\n{args.date}, {args.machine}; `python bench/runner_latency.py` (loopback gRPC, "
        "durable SQLite queue with fsync, one client).\n\n"
        "| measurement | result |\n|---|---|\n"
        f"| cached score, Evaluate round trip ({cached['requests']} requests, each a new job) | "
        f"p50 {cached['p50_ms']:.1f} ms, p99 {cached['p99_ms']:.1f} ms, max {cached['max_ms']:.1f} ms "
        f"({verdict} the p99 < 20 ms target) |\n"
        f"| queue throughput, instant fake evaluate, 2 lanes, {flow['clients']} concurrent clients | "
        f"{flow['jobs']} jobs in {flow['seconds']:.1f} s = {flow['jobs_per_s']:.0f} jobs/s |\n"
    )
    print(text)
    if args.write:
        with args.write.open("a", encoding="utf-8") as results:
            results.write(text)


if __name__ == "__main__":
    main()
