"""Exemplar speedups of the task corpus, measured on a GPU: baseline against every exemplar.

For each task of the chosen categories, every case is checked first: the baseline and each
exemplar must match the reference within the task's tolerances, and the wrong candidate must
fail at least one case. Then each timed case is timed: every call alone between CUDA events,
after a write of >= 2x the L2 cache, baseline and exemplars interleaved call by call, median
of --reps calls. Inputs come from the harness's own generator (arena.harness.inputs), and
candidates are loaded by the harness's loader, so these are the numbers the arena would see
(minus its hidden seeds and repeated trials).

Run from the repository root on a GPU machine (torch and triton installed; no Pants needed):
    PYTHONUNBUFFERED=1 python3 bench/corpus_speed_check.py --category triton2triton --category repository
Prints one markdown row per (timed case, exemplar) and one geometric-mean speedup per task.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "src" / "python"))

import torch  # noqa: E402

from arena.harness.backends.python_entry import load_python_entry  # noqa: E402
from arena.harness.check import mismatch_mask  # noqa: E402
from arena.harness.inputs import make_inputs, make_scalars  # noqa: E402
from arena.task.load import load_tasks  # noqa: E402
from arena.task.task import Case, Task  # noqa: E402
from arena.task.tolerance import tolerance_for  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", action="append", help="category (repeatable; default: the Python ones)")
    parser.add_argument("--task", action="append", help="task name (repeatable; default: every task)")
    parser.add_argument("--reps", type=int, default=50, help="timed calls per candidate and case")
    parser.add_argument("--timed-only", action="store_true", help="check only the timed cases")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--device", default="cuda", help="cuda, or cpu (with TRITON_INTERPRET=1: checks untimed cases only)"
    )
    args = parser.parse_args()
    categories = set(args.category or ["triton2triton", "repository"])
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"# {name}, torch {torch.__version__}, triton {_triton_version()}")
    flush = _make_flush(device) if device.type == "cuda" else None
    rows: list[dict] = []
    failures: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="corpus_speed_"))
    try:
        for task in load_tasks(REPO_ROOT):
            if task.category.value not in categories or (args.task and task.name not in args.task):
                continue
            started = time.time()
            task_rows, task_failures = _run_task(task, device, flush, args, workdir)
            rows += task_rows
            failures += task_failures
            print(f"  ({task.name}: {time.time() - started:.1f} s)", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    _print_summary(rows)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "failures": failures}, indent=1))
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


def _run_task(task: Task, device: torch.device, flush, args, workdir: Path) -> tuple[list[dict], list[str]]:
    """Check every case and time every timed case of one task; (table rows, failure messages)."""
    candidates = {"baseline": _load(task, None, workdir, "baseline")}
    for folder in task.exemplars:
        candidates[folder] = _load(task, folder, workdir, "exemplar")
    wrong = _load(task, task.wrong, workdir, "wrong") if task.wrong else None
    # reference="baseline" declares the baseline the oracle, as the harness reads it.
    reference = load_python_entry(REPO_ROOT / task.task_dir, task.reference or task.entry, "reference")
    failures: list[str] = []
    wrong_failed = False
    rows: list[dict] = []
    print(f"\n## {task.name} ({task.category.value})", flush=True)
    for case in task.cases:
        if (args.timed_only and not case.timed) or (flush is None and case.timed):
            continue
        inputs = make_inputs(task, case, device)
        scalars = make_scalars(task, case)
        want = _call(reference, inputs, scalars)
        ratios = {}
        for label, fn in candidates.items():
            ok, ratio = _check(task, case, _call(fn, inputs, scalars), want)
            ratios[label] = ratio
            if not ok:
                failures.append(f"{task.name} {case.name}: {label} differs from the reference ({ratio:.3g})")
        if wrong is not None:
            ok, _ = _check(task, case, _call(wrong, inputs, scalars), want)
            wrong_failed |= not ok
        checks = " ".join(f"{label}={ratio:.2g}" for label, ratio in ratios.items())
        print(f"  check {case.name:24s} {case.dtype:9s} max err/limit: {checks}", flush=True)
        if case.timed:
            medians = _time_case(candidates, inputs, scalars, flush, args.reps)
            for folder in task.exemplars:
                rows.append(
                    {
                        "task": task.name,
                        "case": case.name,
                        "dtype": case.dtype,
                        "exemplar": folder,
                        "baseline_us": medians["baseline"],
                        "exemplar_us": medians[folder],
                        "speedup": medians["baseline"] / medians[folder],
                        "err_over_limit": ratios[folder],
                    }
                )
                speedup = medians["baseline"] / medians[folder]
                print(
                    f"  time  {case.name:24s} baseline {medians['baseline']:10.1f} us   {folder} "
                    f"{medians[folder]:10.1f} us   x{speedup:.2f}",
                    flush=True,
                )
        del inputs, want
        torch.cuda.empty_cache()
    if wrong is not None and not wrong_failed:
        failures.append(f"{task.name}: the wrong candidate passed every checked case")
    return rows, failures


def _load(task: Task, folder: str | None, workdir: Path, label: str):
    """The entry of the task's files with `folder`'s files (None: the baseline) laid over them."""
    directory = workdir / f"{task.name}-{(folder or 'baseline').replace('/', '_')}"
    task_dir = REPO_ROOT / task.task_dir
    for name in task.all_files():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task_dir / name, directory / name)
    if folder:
        for path in sorted((task_dir / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                target = directory / path.relative_to(task_dir / folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return load_python_entry(directory, task.entry, label)


def _call(kernel, inputs: list[torch.Tensor], scalars: dict) -> tuple[torch.Tensor, ...]:
    result = kernel.invoke([x.clone() for x in inputs], scalars, [], {})
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _check(task: Task, case: Case, got: tuple, want: tuple) -> tuple[bool, float]:
    """(all outputs pass, the largest |got - want| / (atol + rtol * |want|) over finite elements)."""
    ok, worst = len(got) == len(want), 0.0
    for g, w in zip(got, want):
        if not isinstance(g, torch.Tensor) or g.shape != w.shape or g.dtype != w.dtype:
            return False, math.inf
        tol = tolerance_for(task, str(w.dtype).removeprefix("torch."))
        ok &= not bool(mismatch_mask(g, w, tol).any())
        if w.is_floating_point():
            finite = torch.isfinite(w) & torch.isfinite(g)
            err = (g.double() - w.double()).abs() / (tol.atol + tol.rtol * w.double().abs())
            worst = max(worst, float(err[finite].max()) if finite.any() else 0.0)
        else:
            worst = max(worst, float((g != w).sum()))
    return ok, worst


def _time_case(candidates: dict, inputs: list, scalars: dict, flush, reps: int) -> dict[str, float]:
    """Median microseconds per candidate: calls interleaved, each after a cache flush."""
    for fn in candidates.values():  # compile and warm up
        fn.invoke(inputs, scalars, [], {})
    torch.cuda.synchronize()
    events: dict[str, list[tuple[torch.cuda.Event, torch.cuda.Event]]] = {label: [] for label in candidates}
    for _ in range(reps):
        for label, fn in candidates.items():
            flush()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn.invoke(inputs, scalars, [], {})
            end.record()
            events[label].append((start, end))
    torch.cuda.synchronize()
    return {
        label: statistics.median(start.elapsed_time(end) * 1000.0 for start, end in pairs)
        for label, pairs in events.items()
    }


def _make_flush(device: torch.device):
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    buffer = torch.empty(max(2 * l2, 256 << 20) // 4, dtype=torch.int32, device=device)
    calls = [0]

    def flush() -> None:
        calls[0] += 1
        buffer.fill_(calls[0] & 1)  # a different value each call: no write is redundant

    return flush


def _print_summary(rows: list[dict]) -> None:
    print("\n| task | case | dtype | baseline us | exemplar | exemplar us | speedup |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['task']} | {row['case']} | {row['dtype']} | {row['baseline_us']:.1f} | "
            f"{row['exemplar']} | {row['exemplar_us']:.1f} | {row['speedup']:.2f}x |"
        )
    by_task: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        by_task.setdefault((row["task"], row["exemplar"]), []).append(row["speedup"])
    print("\n| task | exemplar | geomean speedup | min speedup |")
    print("|---|---|---|---|")
    for (task, exemplar), speedups in by_task.items():
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        print(f"| {task} | {exemplar} | {geomean:.2f}x | {min(speedups):.2f}x |")


def _triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except ImportError:
        return "absent"


if __name__ == "__main__":
    sys.exit(main())
