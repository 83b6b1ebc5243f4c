"""Does a corpus the size of the reference arena's list and validate in time? (issue #17)

    PYTHONPATH=src/python python3 bench/corpus_scale.py --out /tmp/corpus214 --json scale.json \
        [--part listing validation] [--sample 6] [--jobs N] [--timeout S]

Generates, in --out (outside the repository; never committed), a repository-shaped tree of 214
tasks in the reference arena's mix (triton2triton 148, hip2hip 36, torch2hip 26, repository 4):
pants.toml (the marker find_repo_root looks for) and tasks/, each category's folders cloned
round-robin from ours under new names (softmax, softmax_x2, softmax_x3, ...) with the `name=`
of every cloned BUILD file rewritten, so every address is unique. That is also what the Pants
sandbox of one task's validation holds (the task's files, its BUILD file and pants.toml).

Listing: load_tasks on that root in a new process (cold: interpreter, imports and BUILD files
read once; the page cache is warm, the generation just wrote them), in this process again
(warm), and `arena tasks --json` pointed at it with --repo-root (it also hashes every task's
files). Validation: `python -m arena.cli.main --repo-root OUT validate-task --task ADDR` for
every task, or for --sample K spread over the categories (largest first), --jobs at a time, each
with its seconds, exit code and verdict; then the wall, the sum, and (with --sample) the wall a
full run would take at --estimate-jobs, estimated from the sample's per-category means. The
processes import a copy of src/python/arena taken at the start: the harness refuses to run once
its sources change on disk, and the checkout may be edited meanwhile. The Python running this
script must hold torch and triton (a measurement environment, as `arena validate-task` needs).
The machine's load average is recorded beside the timings: on a shared machine they move with it.

How Pants caches the same validation (src/python/pants_plugins/arena_pants/rules.py,
validate_kernel_task): every kernel_task is a test target whose test is one Process, the
arena-bundled VenvPex running `validate-task --task <address>` in a sandbox holding the target's
task_files (every file of its folder but BUILD), that folder's BUILD file and pants.toml. Pants
keys the process by its argv (so the address), its environment ([test].extra_env_vars), its
timeout ([arena-tasks].timeout) and the digest of its input root: those task files, BUILD and
pants.toml merged with the PEX's own digest (the arena sources and the whole lockfile's
requirements). An unchanged task is served from the process cache (local store, or a remote
cache) without running; editing one task's files or declaration reruns that task alone
(`--changed-since` also picks only it); editing pants.toml, an arena source in the PEX or the
lockfile reruns all 214. The cache scope is SUCCESSFUL: only passing verdicts are kept, so a
failing task runs again every time (and `test --force` reruns all, per session). A clone under
another address is another key, even with identical files.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.task.load import TASKS_FOLDER, load_tasks

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "src" / "python"
# The reference arena's corpus: 214 tasks.
MIX = {"triton2triton": 148, "hip2hip": 36, "torch2hip": 26, "repository": 4}
ROOT_FILES = ("pants.toml",)  # what find_repo_root needs; load_tasks reads tasks/ alone
REPEATS = 5  # listing runs of each kind

# Timed in a new process: the imports and one load_tasks.
COLD_LISTING = """
import json, sys, time
start = time.perf_counter()
from pathlib import Path
from arena.task.load import load_tasks
imported = time.perf_counter()
count = len(load_tasks(Path(sys.argv[1])))
print(json.dumps({"import_s": imported - start, "load_tasks_s": time.perf_counter() - imported, "tasks": count}))
"""


@dataclass
class Validation:
    address: str
    source: str  # the task folder it was cloned from
    seconds: float
    exit_code: int
    verdict: str  # validate-task's last line


def clone_name(name: str, copy: int) -> str:
    """The first copy keeps the name; later ones are name_x2, name_x3, ..."""
    return name if copy == 1 else f"{name}_x{copy}"


def rename_task(build_text: str, new_name: str) -> str:
    """The BUILD text with its kernel_task's `name=` literal replaced (found with ast, not a regex,
    so a `name` inside a description is never touched); without one the folder's name is used."""
    tree = ast.parse(build_text)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "kernel_task"]
    values = [k.value for call in calls for k in call.keywords if k.arg == "name"]
    if not values:
        return build_text
    value = values[0]
    if value.end_lineno != value.lineno or value.end_col_offset is None:
        raise ValueError(f"name={ast.unparse(value)} spans lines")
    lines = build_text.splitlines(keepends=True)
    line = lines[value.lineno - 1].encode()  # ast's columns count UTF-8 bytes
    lines[value.lineno - 1] = (line[: value.col_offset] + json.dumps(new_name).encode()
                               + line[value.end_col_offset:]).decode()  # fmt: skip
    return "".join(lines)


def check_out(out: Path) -> Path:
    """--out, made; refused inside the repository (generated tasks are never committed) or not empty."""
    out = out.resolve()
    if out == REPO or out.is_relative_to(REPO):
        raise SystemExit(f"--out {out} is inside the repository; give a temporary folder")
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"--out {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    return out


def generate(root: Path) -> dict[str, str]:
    """The tree under `root`; returns {generated address: folder it was cloned from}."""
    for name in ROOT_FILES:
        shutil.copy2(REPO / name, root / name)
    (root / TASKS_FOLDER).mkdir()
    shutil.copy2(REPO / TASKS_FOLDER / "BUILD", root / TASKS_FOLDER / "BUILD")  # suites only: load_tasks skips them
    sources: dict[str, str] = {}
    for category, count in MIX.items():
        folder = REPO / TASKS_FOLDER / category
        (root / TASKS_FOLDER / category).mkdir()
        shutil.copy2(folder / "BUILD", root / TASKS_FOLDER / category / "BUILD")
        originals = sorted(p for p in folder.iterdir() if (p / "BUILD").is_file())
        for i in range(count):
            source = originals[i % len(originals)]
            name = clone_name(source.name, i // len(originals) + 1)
            target = root / TASKS_FOLDER / category / name
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            build = target / "BUILD"
            build.write_text(rename_task(build.read_text(encoding="utf-8"), name), encoding="utf-8")
            sources[f"{TASKS_FOLDER}/{category}/{name}:{name}"] = source.relative_to(REPO).as_posix()
    return sources


@dataclass(frozen=True)
class Arena:
    """How the arena processes start: this interpreter, importing a snapshot of the sources."""

    python: str
    sources: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.sources), "PYTHONUNBUFFERED": "1"}


def snapshot_sources(out: Path, python: str) -> Arena:
    """The arena package copied beside the tree: the harness refuses to run once its sources change
    on disk (pin_sources), and the checkout may be edited while this runs (as a PEX is not)."""
    shutil.copytree(SOURCES / "arena", out / "sources" / "arena", ignore=shutil.ignore_patterns("__pycache__"))
    return Arena(python, out / "sources")


def time_cold_listing(arena: Arena, root: Path) -> dict[str, Any]:
    start = time.perf_counter()
    done = subprocess.run([arena.python, "-c", COLD_LISTING, str(root)], cwd=root, env=arena.env(),
                          capture_output=True, text=True, check=True)  # fmt: skip
    return {"process_s": time.perf_counter() - start, **json.loads(done.stdout.strip().splitlines()[-1])}


def time_warm_listing(root: Path) -> dict[str, Any]:
    start = time.perf_counter()
    count = len(load_tasks(root))
    return {"load_tasks_s": time.perf_counter() - start, "tasks": count}


def time_cli_listing(arena: Arena, root: Path) -> dict[str, Any]:
    listed = root.parent / f"{root.name}-tasks.json"  # beside the tree, so it is no task file
    start = time.perf_counter()
    command = [arena.python, "-m", "arena.cli.main", "--repo-root", str(root), "tasks", "--json", str(listed)]
    subprocess.run(command, cwd=root, env=arena.env(), capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    return {"process_s": seconds, "tasks": len(json.loads(listed.read_text()))}


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def listing(arena: Arena, root: Path, expected: int) -> dict[str, Any]:
    cold = [time_cold_listing(arena, root) for _ in range(REPEATS)]
    time_warm_listing(root)  # the first call in this process pays for the imports it triggers
    warm = [time_warm_listing(root) for _ in range(REPEATS)]
    cli = [time_cli_listing(arena, root) for _ in range(REPEATS)]
    counts = {run["tasks"] for run in cold + warm + cli}
    if counts != {expected}:
        raise SystemExit(f"listing found {sorted(counts)} task(s), expected {expected}")
    return {
        "tasks": expected,
        "cold": cold,
        "cold_process_median_s": median_of(cold, "process_s"),
        "cold_load_tasks_median_s": median_of(cold, "load_tasks_s"),
        "warm": warm,
        "warm_load_tasks_median_s": median_of(warm, "load_tasks_s"),
        "cli_tasks": cli,
        "cli_tasks_median_s": median_of(cli, "process_s"),
    }


def sample(addresses: list[str], k: int | None) -> list[str]:
    """`k` addresses: one per category in turn, largest category first, until k; within a category
    spread evenly over its sorted addresses (so over different source tasks, clones sort beside
    their originals). None: all of them."""
    if k is None or k >= len(addresses):
        return list(addresses)
    by_category = {c: sorted(a for a in addresses if a.split("/")[1] == c) for c in MIX}
    quota = dict.fromkeys(MIX, 0)
    while sum(quota.values()) < k:
        for category in MIX:
            if sum(quota.values()) < k and quota[category] < len(by_category[category]):
                quota[category] += 1
    chosen = []
    for category, q in quota.items():
        found = by_category[category]
        chosen += [found[int((i + 0.5) * len(found) / q)] for i in range(q)]
    return chosen


def validate_one(arena: Arena, root: Path, address: str, source: str, timeout_s: float) -> Validation:
    """One validate-task process, its output kept in a log beside the tree."""
    log = root.parent / f"{root.name}-logs" / (address.replace("/", "_").replace(":", "__") + ".log")
    log.parent.mkdir(exist_ok=True)
    command = [arena.python, "-m", "arena.cli.main", "--repo-root", str(root), "validate-task", "--task", address]
    start = time.perf_counter()
    with log.open("wb") as output:
        try:
            code = subprocess.run(command, cwd=root, env=arena.env(), stdout=output, stderr=subprocess.STDOUT,
                                  timeout=timeout_s).returncode  # fmt: skip
        except subprocess.TimeoutExpired:  # killed: a hung task must not stall the run
            code = -signal.SIGKILL
    lines = log.read_text(errors="replace").strip().splitlines()
    return Validation(address, source, time.perf_counter() - start, code, lines[-1] if lines else "")


def estimate(results: list[Validation], jobs: int) -> dict[str, Any]:
    """The full corpus's wall at `jobs` at a time, from the sample's mean per category (the overall
    mean where a category was not sampled), assuming a task's time does not change with concurrency."""
    overall = statistics.mean(r.seconds for r in results)
    means = {}
    for category in MIX:
        found = [r.seconds for r in results if r.address.split("/")[1] == category]
        means[category] = statistics.mean(found) if found else overall
    summed = sum(means[c] * n for c, n in MIX.items())
    return {"jobs": jobs, "mean_s_by_category": means, "summed_s": summed, "wall_s": summed / jobs}


def validation(arena: Arena, root: Path, sources: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    chosen = sample(sorted(sources), args.sample)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(validate_one, arena, root, a, sources[a], args.timeout) for a in chosen]
        results = []
        for future in futures:
            results.append(future.result())
            done = results[-1]
            print(f"{done.address:60s} {done.seconds:7.1f} s  exit {done.exit_code}  {done.verdict}", flush=True)
    wall = time.perf_counter() - start
    return {
        "jobs": args.jobs,
        "tasks": [asdict(r) for r in results],
        "wall_s": wall,
        "summed_s": sum(r.seconds for r in results),
        "failed": [r.address for r in results if r.exit_code != 0],
        "estimate_full": estimate(results, args.estimate_jobs) if args.sample is not None else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="an empty folder outside the repository")
    parser.add_argument("--json", type=Path, required=True, help="where the report goes")
    parser.add_argument("--part", nargs="+", choices=("listing", "validation"), default=["listing", "validation"])
    parser.add_argument("--sample", type=int, help="validate only K tasks, spread over the categories")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="validations at a time")
    parser.add_argument("--estimate-jobs", type=int, default=2, help="concurrency the full-run estimate assumes")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per validation ([arena-tasks].timeout)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the arena processes")
    args = parser.parse_args()
    out = check_out(args.out)
    arena = snapshot_sources(out, args.python)
    root = out / "repo"
    root.mkdir()
    start = time.perf_counter()
    sources = generate(root)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "root": str(root),
        "python": args.python,
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),  # the machine may be shared: the timings read with it
        "generated": {"tasks": len(sources), "by_category": MIX, "seconds": time.perf_counter() - start},
    }
    if "listing" in args.part:
        report["listing"] = listing(arena, root, len(sources))
        print(json.dumps({k: v for k, v in report["listing"].items() if k.endswith("_s")}), flush=True)
    if "validation" in args.part:
        report["validation"] = validation(arena, root, sources, args)
    report["load_average_after"] = os.getloadavg()
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
