"""Throughput through the product's own path (#36): an evaluation's wall by stage, a suite's wall
and its scaling over GPUs, and what a pool adds to each job.

    PYTHONPATH=src/python python3 bench/throughput.py evaluate [--tasks ADDR ...] [--repeats 2]
    PYTHONPATH=src/python python3 bench/throughput.py suite --category triton2triton [--devices 0 all]
    PYTHONPATH=src/python python3 bench/throughput.py pool [--jobs 6] [--workers 2] [--gpu cpu|N|all] [--timed]
    ... [--json FILE]

evaluate: `arena evaluate --no-cache --json` per task, a no-op (the baseline as the candidate),
in a fresh process each time as a user runs it (sandbox as the machine allows): the command's
wall and each harness stage's seconds from the evaluation's own stage logs; the first run of a
task pays the Triton and HIP compile caches, the others not.
suite: `arena suite --no-cache --json` over a category, once per ARENA_DEVICES value (its lanes:
one per device): the wall of each and the speed-up over the first.
pool: an `arena pool server` (BuildGrid, PostgreSQL) and --workers `arena pool worker`s on
loopback (--gpu all: worker n on GPU n); the same no-op job (check-only, or --timed) run --jobs
times through the local executor and through the pool (the remote executor): the per-job
overhead is the difference of their medians; then --jobs of them sent to the pool at once: the
wall, its speed-up over the same jobs one at a time, and the jobs each worker ran.
Without a GPU, evaluate and suite check the untimed cases in Triton's interpreter: the figures
are the CPU path's, not the H200's; say which in the journal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
SMALL_TASKS = ("tasks/triton2triton/rms_norm", "tasks/triton2triton/log_softmax", "tasks/triton2triton/softmax")


def arena(*argv: str, env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    """`arena ARGV` in a new process, with its wall in seconds."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "--repo-root", str(REPO), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return time.perf_counter() - began, done


def evaluate_part(tasks: list[str], repeats: int, backend: str, flags: Sequence[str] = ()) -> list[dict[str, Any]]:
    """`arena evaluate` of each task's no-op, `repeats` times, with `flags` (an experiment's)."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for task in tasks:
            for repeat in range(repeats):
                out = Path(scratch) / "evaluation.json"
                argv = ("evaluate", "--task", task, "--no-cache", "--backend", backend, "--json", str(out), *flags)
                wall, done = arena(*argv)
                if not out.exists():
                    detail = done.stderr[-2000:]
                    raise SystemExit(f"{task}: arena evaluate wrote nothing (exit {done.returncode}):\n{detail}")
                evaluation = json.loads(out.read_text())
                stages = {s["name"]: float(s["seconds"]) for s in evaluation.get("stages", [])}
                rows.append(
                    {
                        "task": task,
                        "run": repeat + 1,
                        "wall_s": round(wall, 2),
                        "status": evaluation["status"],
                        "stages_s": stages,
                        "harness_s": round(sum(stages.values()), 2),
                    }
                )
                print(
                    f"{task} run {repeat + 1}: {wall:.1f} s wall, {evaluation['status']}; "
                    + ", ".join(f"{n} {s:.2f}" for n, s in stages.items()),
                    flush=True,
                )
    return rows


def suite_part(category: str, devices: list[str], backend: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for device in devices:
            out = Path(scratch) / f"suite-{device}.json"
            env = {} if device == "all" else {"ARENA_DEVICES": device}
            wall, done = arena(
                "suite", "--category", category, "--no-cache", "--backend", backend, "--json", str(out), env=env
            )
            if not out.exists():
                raise SystemExit(f"suite on {device}: wrote nothing (exit {done.returncode}):\n{done.stderr[-2000:]}")
            document = json.loads(out.read_text())
            evaluations = document.get("evaluations", [])
            rows.append({"devices": device, "wall_s": round(wall, 1), "evaluations": len(evaluations)})
            print(f"suite {category} on {device}: {wall:.1f} s, {len(evaluations)} evaluations", flush=True)
    for row in rows:
        row["speedup"] = round(rows[0]["wall_s"] / row["wall_s"], 3)
    return rows


def pool_part(jobs: int, workers: int, gpu: str, timed: bool) -> dict[str, Any]:
    """Local against pool wall per job (one at a time), then `jobs` jobs sent to the pool at once:
    its wall, the speed-up over the same jobs one at a time, and how many each worker ran."""
    from arena.executors.local import LocalExecutor
    from arena.harness.settings import HarnessSettings
    from arena.pool.processes import stop_process
    from arena.task.load import load_task

    backend = "cpu" if gpu == "cpu" else "auto"
    task = load_task(REPO, "tasks/triton2triton/softmax")
    small = next(case.name for case in task.cases if not case.timed)  # the interpreter's size on the CPU
    settings = HarnessSettings(backend=backend, check_only=not timed, cases=() if timed else (small,))
    folder = Path(tempfile.mkdtemp(prefix="arena-pool-"))  # short: PostgreSQL's socket path
    processes: list[subprocess.Popen[bytes]] = []
    try:
        remote = _pool(folder, workers, gpu, processes)
        walls: dict[str, list[float]] = {"local": [], "pool": []}
        for _ in range(jobs):
            for name, executor in (("local", LocalExecutor()), ("pool", remote)):
                walls[name].append(_job(executor, task, settings, name))
        medians = {name: statistics.median(values) for name, values in walls.items()}
        before = _leases(folder, workers)
        together = _together(remote, task, settings, jobs, workers)
        ran = {name: count - before[name] for name, count in _leases(folder, workers).items()}
        summary = {
            "jobs": jobs,
            "workers": workers,
            "gpu": gpu,
            "timed": timed,
            "median_s": medians,
            "overhead_s": round(medians["pool"] - medians["local"], 2),
            "walls_s": {k: [round(v, 2) for v in values] for k, values in walls.items()},
            "together_s": round(together, 2),
            "speedup": round(sum(walls["pool"]) / together, 2),
            "jobs_by_worker": ran,
        }
        print(
            f"pool: local {medians['local']:.2f} s, pool {medians['pool']:.2f} s a job (median of {jobs}): "
            f"{summary['overhead_s']:+.2f} s a job; {jobs} at once {together:.1f} s "
            f"({summary['speedup']:.2f}x the same one at a time), by worker {ran}",
            flush=True,
        )
        return summary
    finally:
        for process in reversed(processes):
            stop_process(process)
        shutil.rmtree(folder, ignore_errors=True)


def _pool(folder: Path, workers: int, gpu: str, processes: list[subprocess.Popen[bytes]]) -> Any:
    """A pool server and `workers` workers (with --gpu all, worker n on GPU n); the remote executor."""
    from arena.executors.remote import RemoteExecutor
    from arena.pool.tokens import ensure_secret, mint, write_token

    endpoint = f"127.0.0.1:{_free_port()}"
    processes.append(
        _start(folder / "server.log", "pool", "server", "--listen", endpoint, "--state", str(folder / "state"))
    )
    _wait(folder / "server.log", r"arena pool server on ", processes[0])
    secret = ensure_secret(folder / "state").read_text()  # the server's own, as `arena pool token` reads it
    write_token(folder / "worker.token", mint(secret, "worker", "bench", days=1))
    for n in range(workers):
        work = folder / f"w{n}-work"
        work.mkdir()
        log = folder / f"w{n}.log"
        device = str(n) if gpu == "all" else gpu
        processes.append(
            _start(
                log,
                "pool",
                "worker",
                "--server",
                endpoint,
                "--gpu",
                device,
                "--bot-id",
                f"w{n}",
                "--work",
                str(work),
                "--token-file",
                str(folder / "worker.token"),
            )  # fmt: skip
        )
        _wait(log, r"bot session", processes[-1])
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    name = "cpu" if gpu == "cpu" else _gpu_name()
    token = mint(secret, "runner", "bench", days=1)
    return RemoteExecutor(endpoint, name, backend="cpu" if gpu == "cpu" else "cuda", path=path, token=token)


def _gpu_name() -> str:
    from arena.pool.worker import gpu_name

    return gpu_name("0")


def _job(executor: Any, task: Any, settings: Any, name: str) -> float:
    """One no-op job's wall; it must pass."""
    began = time.perf_counter()
    result = executor.run(task, None, REPO, settings)
    if not result.correct:
        raise SystemExit(f"{name}: the no-op did not pass: {result.status} {result.errors[:1]}")
    return time.perf_counter() - began


def _together(remote: Any, task: Any, settings: Any, jobs: int, workers: int) -> float:
    """The wall of `jobs` no-ops sent to the pool at once (distinct seeds: no action cache hit)."""
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(workers, 1) * 2) as pool:
        seeds = [replace(settings, secret_seed=1000 + n) for n in range(jobs)]
        list(pool.map(lambda s: _job(remote, task, s, "pool at once"), seeds))
    return time.perf_counter() - began


def _leases(folder: Path, workers: int) -> dict[str, int]:
    """Leases each worker has finished, from its log."""
    return {f"w{n}": len(re.findall(r"lease \S+ done", (folder / f"w{n}.log").read_text())) for n in range(workers)}


def _start(log: Path, *argv: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli.main", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def _wait(log: Path, pattern: str, process: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if re.search(pattern, log.read_text(errors="replace")):
            return
        if process.poll() is not None:
            raise SystemExit(f"{log.name}: ended ({process.returncode}):\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    raise SystemExit(f"{log.name}: no {pattern!r} within {timeout_s:g} s")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("evaluate", "suite", "pool"))
    parser.add_argument("--tasks", nargs="+", default=list(SMALL_TASKS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--category", default="triton2triton")
    parser.add_argument("--devices", nargs="+", default=["0", "all"], help="ARENA_DEVICES values, 'all': every GPU")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--gpu", default="cpu", help="the pool workers' --gpu: cpu, a GPU index, or all (worker n on GPU n)"
    )
    parser.add_argument("--timed", action="store_true", help="pool: timed no-op jobs (default: check-only)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline-worker", action="store_true", help="evaluate: the baseline in a worker of its own")
    args = parser.parse_args()
    if args.part == "evaluate":
        flags = ["--baseline-worker"] if args.baseline_worker else []
        result: Any = evaluate_part(args.tasks, args.repeats, args.backend, flags)
    elif args.part == "suite":
        result = suite_part(args.category, args.devices, args.backend)
    else:
        result = pool_part(args.jobs, args.workers, args.gpu, args.timed)
    if args.json:
        args.json.write_text(
            json.dumps({"part": args.part, "date": time.strftime("%Y-%m-%d"), "result": result}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
