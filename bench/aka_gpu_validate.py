"""Validate every task of an import (`arena import aka CHECKOUT --out DIR`) and write a JSON summary.

For each kernel_task under DIR (as `arena --repo-root DIR tasks` lists them; the import's
import.json, when there, only adds its counts to the summary) this runs
`python -m arena.cli.main --repo-root DIR validate-task --task ADDR` in a child process of its own
session, with a wall-clock limit per task (killed with its harness children when it runs past),
and records the address, the exit code, the wall seconds, the last 40 lines of its output, its
FAIL lines, and a verdict: valid (exit 0), unchecked (exit 0, the baseline not run: the task is
declared for another GPU family, task/archs.py), invalid (any other exit) or timeout. The JSON is
rewritten after every task, so a run that is cut off keeps what it has. --jobs runs that many
tasks at once (validate-task only checks, it times nothing, so they may share a GPU); --budget
caps the whole run: no task starts past it, each one's limit is cut to what is left of it, and
the tasks never started are listed as not_run. Made for a GPU machine
with the product's requirements (torch, triton, numpy, grpcio, protobuf) and neither Pants nor a
network; on a CPU validate-task checks the non-timed case through the Triton interpreter.

Run from the repository root, DIR holding an import (never commit it: it holds the imported
arena's code):
    PYTHONUNBUFFERED=1 PYTHONPATH=src/python python3 bench/aka_gpu_validate.py --root .aka \
        --out bench/out/aka_gpu_validate.json [--timeout 120] [--jobs 1] [--budget S] [--task ADDR ...] [--limit N]
(ARENA_SANDBOX=off in the environment runs the harness children without bubblewrap.)
Prints one line per task and a summary line, "N of M validate". Exit status 0 when every task
run validates, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCES = REPO_ROOT / "src" / "python"
sys.path.insert(0, str(SOURCES))

from arena.errors import ArenaError  # noqa: E402
from arena.task.load import load_tasks  # noqa: E402

TAIL_LINES = 40
PACKAGES = ("torch", "triton", "numpy", "grpcio", "protobuf")


def imported_addresses(root: Path) -> tuple[list[str], dict[str, Any]]:
    """The tasks under `root`, sorted, and import.json's counts ({} without one). Listed by arena's
    loader, as `arena tasks` lists them; when a declaration does not load, import.json's list
    (each task then fails on its own in validate-task, with the loader's message)."""
    record: dict[str, Any] = {}
    listed: list[str] = []
    report = root / "import.json"
    if report.is_file():
        data = json.loads(report.read_text())
        record = {key: data.get(key) for key in ("checkout", "tasks", "imported")}
        listed = sorted(o["address"] for o in data.get("outcomes", []) if o.get("imported"))
    try:
        addresses = [task.address for task in load_tasks(root)]
    except ArenaError as error:
        if not record:
            raise
        print(f"the tasks do not all load ({error}); taking import.json's list", file=sys.stderr)
        addresses = listed
    if record:
        record["listed_agrees"] = listed == addresses  # import.json names the tasks the loader finds
    return addresses, record


def machine() -> dict[str, Any]:
    """What this run measured on: the host, the GPU (nvidia-smi's name), the package versions."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    gpu = ""
    if shutil.which("nvidia-smi"):
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        gpu = done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
    return {
        "host": platform.node(),
        "python": sys.executable,
        "python_version": platform.python_version(),
        "gpu": gpu or None,
        "versions": versions,
        "ARENA_SANDBOX": os.environ.get("ARENA_SANDBOX"),
    }


def validate_one(root: Path, address: str, timeout_s: float, backend: str | None) -> dict[str, Any]:
    """One validate-task in a child session; on timeout the whole process group is killed."""
    argv = [sys.executable, "-m", "arena.cli.main", "--repo-root", str(root), "validate-task", "--task", address]
    if backend:
        argv += ["--backend", backend]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SOURCES), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    start = time.monotonic()
    child = subprocess.Popen(
        argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        errors="replace", start_new_session=True,
    )  # fmt: skip
    timed_out = False
    try:
        output, _ = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(child.pid, signal.SIGKILL)  # its own session: validate-task and its harness children
        except ProcessLookupError:
            pass
        output, _ = child.communicate()
    wall_s = time.monotonic() - start
    lines = (output or "").splitlines()
    verdict = "timeout" if timed_out else "valid" if child.returncode == 0 else "invalid"
    if verdict == "valid" and any("baseline: not checked here" in line for line in lines):
        verdict = "unchecked"  # declared for another GPU family (task/archs.py): valid in form, run nowhere here
    return {
        "address": address,
        "verdict": verdict,
        "exit_code": child.returncode,
        "wall_s": round(wall_s, 2),
        "failures": [line for line in lines if line.startswith("FAIL")],
        "tail": lines[-TAIL_LINES:],
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Written whole to a temporary file beside `path`, then moved over it: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(summary, indent=2) + "\n")
    os.replace(temporary, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="an import's output folder (arena import aka --out)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON summary, rewritten after every task")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per task (default 120)")
    parser.add_argument("--task", action="append", default=[], help="only this address (repeatable)")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--jobs", type=int, default=1, help="tasks validated at once (default 1)")
    parser.add_argument("--budget", type=float, metavar="S", help="seconds for the whole run (default: none)")
    parser.add_argument("--backend", choices=("auto", "cuda", "rocm", "cpu"), help="validate-task's --backend")
    args = parser.parse_args()
    root = args.root.resolve()
    addresses, record = imported_addresses(root)
    if args.task:
        wanted = {a if ":" in a else f"{a}:{a.rstrip('/').rsplit('/', 1)[-1]}" for a in args.task}
        addresses = [a for a in addresses if a in wanted]
    if args.limit is not None:
        addresses = addresses[: args.limit]
    if not addresses:
        print(f"no task to validate under {root}", file=sys.stderr)
        return 1
    summary: dict[str, Any] = {
        "root": str(root),
        "import": record,
        "machine": machine(),
        "timeout_s": args.timeout,
        "jobs": args.jobs,
        "budget_s": args.budget,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "total": len(addresses),
        "done": 0,
        "valid": 0,
        "complete": False,
        "results": [],
        "not_run": [],
    }
    write_summary(args.out, summary)
    start = time.monotonic()
    lock = threading.Lock()

    def run_one(address: str) -> None:
        timeout_s = args.timeout
        if args.budget is not None:
            timeout_s = min(timeout_s, args.budget - (time.monotonic() - start))
        if timeout_s < 5:
            with lock:
                summary["not_run"].append(address)
                summary["not_run"].sort()
                write_summary(args.out, summary)
            return
        result = validate_one(root, address, timeout_s, args.backend)
        with lock:
            summary["results"].append(result)
            summary["results"].sort(key=lambda r: r["address"])
            summary["done"] = len(summary["results"])
            summary["valid"] = sum(r["verdict"] == "valid" for r in summary["results"])
            summary["complete"] = summary["done"] == summary["total"]
            write_summary(args.out, summary)
            first_failure = result["failures"][0][:160] if result["failures"] else ""
            progress = f"[{summary['done']}/{summary['total']}] {result['verdict']:<8} {result['wall_s']:7.1f} s"
            print(f"{progress}  {address}  {first_failure}", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(run_one, addresses))
    line = f"{summary['valid']} of {summary['total']} validate"
    by_verdict = {v: sum(r["verdict"] == v for r in summary["results"]) for v in ("invalid", "timeout", "unchecked")}
    counts = (
        f"{by_verdict['invalid']} invalid, {by_verdict['timeout']} timeout, {by_verdict['unchecked']} unchecked "
        f"(declared for another GPU), {len(summary['not_run'])} not run"
    )
    print(f"{line} ({counts}); summary in {args.out}")
    return 0 if summary["valid"] == summary["total"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
