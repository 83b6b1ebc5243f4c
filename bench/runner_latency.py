"""Runner latency and throughput over loopback (127.0.0.1), on this machine.

1. Cached score: Evaluates whose scores are already in the score cache, from concurrent clients
   (each its own process and agent, with one attempt), through everything a real request meets:
   gRPC, auth and the per-identity limits, the runner with the real arena.evaluation.evaluate
   (its cache lookup: task digest, cache key, SQLite) and the durable job table (fsync on), and
   the stream back. Each request is a different candidate, so a new job that no earlier job
   answers; the cache was filled beforehand through evaluate() with a stand-in harness.
   Two loads: closed (each client sends its next request when the last one answers: the most
   the service does, and latency = clients / throughput by Little's law) and, with --rate R, open
   (the clients together offer R requests/s on a fixed schedule; each latency counts from the
   request's scheduled time, so a stall delays every request behind it and none is left out).
2. Queue throughput: jobs from concurrent clients with an instant fake evaluate, 2 lanes.

Run: PYTHONPATH=src/python python bench/runner_latency.py [--clients 20] [--requests 30] [--rate 200]
     [--write bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
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


def candidate_for(client: int, request: int) -> Candidate:
    return Candidate(TASK, {"kernel.py": b"# client %d request %d\n" % (client, request) + KERNEL})


def agent_tokens(prefix: str, count: int, role: str = "") -> str:
    return ",".join(f"{prefix}{i}:{prefix}{i}-token{role}" for i in range(count))


def cached_client(
    address: str, client: int, warmup: int, requests: int, interval_s: float, start_at: float
) -> tuple[list[float], float, float]:
    """One agent's loop (in its own process): (latencies in ms, start and end of the timed part).
    interval_s 0: closed loop. Otherwise request k of the timed part is due at start_at + (k +
    phase) * interval_s, and its latency counts from then."""
    with Client(address, f"bench{client}-token") as session:
        attempt = session.open_attempt(TASK)
        for index in range(warmup):  # connection up, first SQLite pages read
            assert session.evaluate(candidate_for(client, index), attempt.id).cached
        latencies_ms: list[float] = []
        phase = (client * 0.618034) % 1.0  # spread the clients' schedules over the interval
        if interval_s:
            time.sleep(max(0.0, start_at - time.time()))
        began = time.time()
        for k in range(requests):
            due = began + (k + phase) * interval_s
            if interval_s:
                time.sleep(max(0.0, due - time.time()))
            started = time.time() if not interval_s else due
            result = session.evaluate(candidate_for(client, warmup + k), attempt.id)
            latencies_ms.append((time.time() - started) * 1000)
            assert result.cached, result
        return latencies_ms, began, time.time()


def measure_cached_score(
    root: Path, clients: int, requests: int, rate: float = 0.0, warmup: int = 5
) -> dict[str, float]:
    """rate 0: closed loop; otherwise the requests/s all clients offer together."""
    repo = write_repo(root / "repo")
    task = load_tasks(repo)[0]
    store = SqliteStore(root / "scores.sqlite")
    settings = HarnessSettings(backend="cpu")
    for client in range(clients):  # fill the cache with a stand-in harness: every later evaluate() hits
        for index in range(warmup + requests):
            seeded = evaluate(
                task, candidate_for(client, index), repo, settings, store,
                runner=lambda *_: HarnessResult("PASSED", True, True),
            )  # fmt: skip
            assert seeded.status is Status.PASSED and not seeded.cached
    runner = Runner(repo, root / "state", evaluate, settings=settings, store=store, tasks=(task,)).start()
    server, port = create_server("127.0.0.1:0", runner, Tokens(parse_tokens(agent_tokens("bench", clients))))
    server.start()
    try:
        # Clients in processes of their own (spawned: gRPC does not survive fork), as agents are.
        with multiprocessing.get_context("spawn").Pool(clients) as pool:
            interval_s = clients / rate if rate else 0.0
            start_at = time.time() + 2.0 + 0.2 * clients  # every client connected and warmed up by then
            results = pool.starmap(
                cached_client,
                [(f"127.0.0.1:{port}", client, warmup, requests, interval_s, start_at) for client in range(clients)],
            )
    finally:
        server.stop(0).wait(5)
        runner.stop()
    latencies_ms = [latency for latencies, _, _ in results for latency in latencies]
    seconds = max(end for _, _, end in results) - min(began for _, began, _ in results)
    return {
        "clients": clients,
        "offered_per_s": rate,
        "requests": len(latencies_ms),
        "p50_ms": statistics.median(latencies_ms),
        "p99_ms": percentile(latencies_ms, 0.99),
        "max_ms": max(latencies_ms),
        "seconds": seconds,
        "per_s": len(latencies_ms) / seconds,
    }


def instant_evaluation(task, candidate, repo_root, settings, store) -> Evaluation:  # noqa: ANN001
    return Evaluation("x", task.address, "", "", Status.PASSED, True, True)


def measure_throughput(root: Path, clients: int, jobs_per_client: int) -> dict[str, float]:
    repo = write_repo(root / "repo2")
    runner = Runner(repo, root / "state2", instant_evaluation, lanes=("0", "1"), tasks=load_tasks(repo)).start()
    tokens = Tokens(parse_tokens(agent_tokens("ops", clients, ":operator")))  # one identity per client
    server, port = create_server("127.0.0.1:0", runner, tokens)
    server.start()
    errors: list[BaseException] = []

    def send(worker: int) -> None:
        try:
            with Client(f"127.0.0.1:{port}", f"ops{worker}-token") as client:
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
    parser.add_argument("--clients", type=int, default=20, help="concurrent agents sending cached candidates")
    parser.add_argument("--requests", type=int, default=30, help="timed requests per agent")
    parser.add_argument("--rate", type=float, default=200.0, help="requests/s offered together (open loop)")
    parser.add_argument("--queue-clients", type=int, default=16)
    parser.add_argument("--jobs-per-client", type=int, default=50)
    parser.add_argument("--machine", default=f"{os.cpu_count()}-core CPU dev machine")
    parser.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    parser.add_argument("--write", type=Path, help="append the results as a section to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cached = measure_cached_score(Path(folder), args.clients, args.requests)
        offered = measure_cached_score(Path(folder) / "open", args.clients, args.requests, args.rate)
        flow = measure_throughput(Path(folder), args.queue_clients, args.jobs_per_client)
    latency = "meets" if offered["p99_ms"] < 20 else "misses"
    rate = "meets" if cached["per_s"] >= 200 else "misses"
    text = (
        f"\n## Runner under concurrent agents: cached Evaluate\n\n{args.date}, {args.machine} (`nproc` = "
        f"{os.cpu_count()}); `python bench/runner_latency.py --clients {args.clients} --requests "
        f"{args.requests} --rate {args.rate:g}` (loopback gRPC; the real evaluate's cache lookup answering in "
        "the Evaluate call; "
        "durable SQLite job table with fsync; each client its own process, agent and attempt; every "
        "request a different candidate, its score put in the cache beforehand).\n\n"
        "| measurement | result |\n|---|---|\n"
        f"| cached Evaluate round trip, {offered['clients']} clients offering {offered['offered_per_s']:.0f}/s "
        f"together ({offered['requests']} requests, open loop, from each request's scheduled time) | "
        f"p50 {offered['p50_ms']:.1f} ms, p99 {offered['p99_ms']:.1f} ms, max {offered['max_ms']:.1f} ms "
        f"({latency} the p99 < 20 ms target); served {offered['per_s']:.0f}/s |\n"
        f"| cached Evaluate round trip, {cached['clients']} clients in a closed loop ({cached['requests']} "
        f"requests) | p50 {cached['p50_ms']:.1f} ms, p99 {cached['p99_ms']:.1f} ms, max {cached['max_ms']:.1f} ms |\n"
        f"| cached evaluations per second, closed loop | {cached['requests']} in {cached['seconds']:.1f} s = "
        f"{cached['per_s']:.0f}/s ({rate} the 200/s target) |\n"
        f"| queue throughput, instant fake evaluate, 2 lanes, {flow['clients']} concurrent clients | "
        f"{flow['jobs']} jobs in {flow['seconds']:.1f} s = {flow['jobs_per_s']:.0f} jobs/s |\n"
    )
    print(text)
    if args.write:
        with args.write.open("a", encoding="utf-8") as results:
            results.write(text)


if __name__ == "__main__":
    main()
