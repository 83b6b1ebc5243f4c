"""How precise is the harness's clock? Run on one GPU; writes a JSON report.

    PYTHONPATH=src/python python3 bench/timing_precision.py --out timing.json

Triton copy kernels of about 5 us, 50 us and 500 us are timed two ways, each REPEATS times:
triton.testing.do_bench (median) and 100 back-to-back calls inside one event pair. Reported per
kernel: median and CV of each method across repeats, and each method's measured ratio of a copy
of 2B bytes over a copy of B bytes (the true ratio is 2 where bandwidth bound). Then the overhead
of a whole evaluation (run_harness on a small copy task with a PyTorch reference) beyond its
compile and timing stages: once in a child started cold, then in children a Standby started
ahead, the last two with a faster candidate (so with the profiled call); what starting the
profiler costs, the first time in a process and after; and the product's own path (judged):
no-ops and a copy launched once against twice, through run_harness (--part picks which parts,
--sizes which kernels).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import triton
import triton.language as tl

from arena.harness.device import open_device, select_backend
from arena.harness.flush import MODES, Flusher
from arena.harness.settings import WARM_INPUTS, HarnessSettings
from arena.harness.timing import measure_event_overhead
from arena.scoring.stats import summarize_samples

REPEATS = 8
TRIALS = 3
SIZES = {"5us": 1 << 20, "50us": 24 << 20, "500us": 256 << 20}  # float32 elements copied


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def copy_into(src: torch.Tensor, dst: torch.Tensor, n: int) -> None:
    _copy[(triton.cdiv(n, 4096),)](src, dst, n, BLOCK=4096)


def cv(values: list[float]) -> float:
    return statistics.pstdev(values) / statistics.mean(values)


def do_bench_repeats(size: int, n: int) -> dict:
    x, out = torch.randn(size, device="cuda"), torch.empty(size, device="cuda")
    values = [
        triton.testing.do_bench(lambda: copy_into(x, out, n), return_mode="median") * 1000 for _ in range(REPEATS)
    ]
    return {"median_us": statistics.median(values), "cv": cv(values)}


def batched_repeats(size: int, n: int, calls: int = 100) -> dict:
    x, out = torch.randn(size, device="cuda"), torch.empty(size, device="cuda")
    values = []
    for _ in range(REPEATS):
        copy_into(x, out, n)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            copy_into(x, out, n)
        end.record()
        torch.cuda.synchronize()
        values.append(start.elapsed_time(end) * 1000 / calls)
    return {"median_us": statistics.median(values), "cv": cv(values)}


def copy_task(root: Path, timed: dict[str, int]) -> Any:
    """A copy task under `root` (kernel.py: COPY_TASK, a PyTorch reference): one small checked
    case and a timed case of N float32 elements per entry of `timed`."""
    from arena.task.task import Case, Category, Entry, Task, TensorSpec
    from arena.task.tolerance import merge_tolerances

    task_dir = root / "tasks" / "b" / "copy"
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "kernel.py").write_text(COPY_TASK)
    (task_dir / "reference.py").write_text("def copy(x):\n    return x.clone()\n")
    return Task(
        address="tasks/b/copy:copy",
        name="copy",
        category=Category.TRITON2TRITON,
        task_dir="tasks/b/copy",
        description="",
        baseline=("kernel.py",),
        editable=("kernel.py",),
        entry=Entry("kernel.py", "copy"),
        signature="",
        reference=Entry("reference.py", "copy"),
        inputs=(TensorSpec("x", ("N",)),),
        outputs=(TensorSpec("y", ("N",)),),
        scalars={},
        abi=(),
        cases=(
            Case("small", {"N": 1000}, "float32", 1),
            *(Case(name, {"N": n}, "float32", 2 + i, timed=True) for i, (name, n) in enumerate(timed.items())),
        ),
        tolerances=merge_tolerances({}),
        forbidden=(),
        flops="",
        bytes="2*N*esize",
        exemplars=(),
        wrong="",
        sources=(),
        build="",
        bench="",
    )


def evaluation_overhead() -> dict:
    """run_harness on a copy task (one small case, one ~50 us timed case, 1 hidden seed, a PyTorch
    reference): wall and stages of a cold run, then of runs whose child a Standby started ahead
    (each waits as long as a runner lane would: the previous evaluation's length), the last two
    with a candidate twice as fast as the baseline, which therefore also gets the profiled call."""
    from arena.candidate.candidate import Candidate
    from arena.harness.launch import Standby, run_harness

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        task = copy_task(Path(tmp), {"main": 24 << 20})
        task_dir = Path(tmp) / task.task_dir
        standby = Standby()
        try:
            # The baseline copies twice; the "faster" candidate once, so it gets the profiled call.
            faster = Candidate(task.address, {"kernel.py": COPY_TASK.encode()})
            (task_dir / "kernel.py").write_text(COPY_TASK.replace("    return y\n", COPY_AGAIN + "    return y\n"))
            for kind in ("cold", "cold", "standby", "standby", "standby", "standby-faster", "standby-faster"):
                begin = time.perf_counter()
                result = run_harness(
                    task,
                    faster if kind == "standby-faster" else None,
                    Path(tmp),
                    HarnessSettings(timeout_s=300),
                    None if kind == "cold" else standby,
                )
                wall = time.perf_counter() - begin
                stages = {s.name: s.seconds for s in result.stages}
                runs.append(
                    {
                        "kind": kind,
                        "status": result.status,
                        "wall_s": round(wall, 3),
                        "stages_s": stages,
                        "overhead_s": round(wall - stages.get("compile", 0.0) - stages.get("time", 0.0), 3),
                        "speedup": round(statistics.median(_ratios(result)), 3) if _ratios(result) else None,
                        "errors": list(result.errors)[:2],
                        "logs": {st.name: st.log for st in result.stages},
                    }
                )
                if kind == "cold" and len(runs) == 2:
                    standby.take().close()  # start the first waiting child; it gets a lane's wait
                    time.sleep(wall)
        finally:
            standby.close()
    return {"runs": runs}


JUDGED_SIZES = {"1MiB": 1 << 18, "4MiB": 1 << 20, "16MiB": 1 << 22, "96MiB": 24 << 20}  # float32 elements


def judged_precision(
    repeats: int,
    sizes: list[str],
    modes: list[str],
    out: Path,
    kinds: Sequence[str],
    match_launches: int = HarnessSettings.match_launches,
    baseline_worker: bool = False,
) -> dict:
    """The product's own path (run_harness: the judge, its sandboxed worker, fresh inputs, the
    chunk clock) on copy kernels of 1-96 MiB, with each of `modes` (--warm-inputs settings): `repeats` no-op
    evaluations (the baseline against itself) and `repeats` of a baseline that launches its
    copy twice against a candidate that launches it once (truth: once/twice = 0.5), and of one
    whose second launch writes a fresh output (`kinds`: which of these run). `match_launches`:
    HarnessSettings.match_launches (replace a worker whose later launch differs from the judge's);
    `baseline_worker`: HarnessSettings.baseline_worker (the baseline timed in a worker of its own)."""
    from arena.candidate.candidate import Candidate
    from arena.harness.launch import Standby, run_harness

    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        task = copy_task(Path(tmp), {name: JUDGED_SIZES[name] for name in sizes})
        kernel = Path(tmp) / task.task_dir / "kernel.py"
        once = Candidate(task.address, {"kernel.py": COPY_TASK.encode()})
        standby = Standby()
        try:
            for warm in modes:
                settings = HarnessSettings(
                    timeout_s=300, warm_inputs=warm, match_launches=match_launches, baseline_worker=baseline_worker
                )
                runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
                for kind in kinds:
                    kernel.write_text(BASELINES[kind])
                    for _ in range(repeats):
                        begin = time.perf_counter()
                        result = run_harness(task, None if kind == "noop" else once, Path(tmp), settings, standby)
                        runs[kind].append(
                            {
                                "status": result.status,
                                "wall_s": round(time.perf_counter() - begin, 2),
                                "errors": list(result.errors)[:2],
                                "cases": {
                                    c.name: {
                                        "baseline_median_us": statistics.median(c.baseline_us),
                                        "candidate_median_us": statistics.median(c.candidate_us),
                                        # what the score reads: the mean once outliers are dropped
                                        "baseline_us": summarize_samples(c.baseline_us).mean_us,
                                        "candidate_us": summarize_samples(c.candidate_us).mean_us,
                                        "calls": len(c.candidate_us),
                                        "judged_us": c.candidate_wall_us,
                                        # in the order timed: does the gap between the sides drift
                                        # inside an evaluation, or sit still (placement, process)?
                                        "tenths_ratio": _tenths_ratio(c.baseline_us, c.candidate_us),
                                        # chunks that timed the baseline first, then the others: does
                                        # the side timed second gain (an order effect) or one process?
                                        "by_first_side": _by_first_side(c.baseline_us, c.candidate_us, c.name, result),
                                        # is the clock's step a visible share of a 3 us call?
                                        "baseline_values": _commonest(c.baseline_us),
                                        "candidate_values": _commonest(c.candidate_us),
                                    }
                                    for c in result.cases
                                    if c.candidate_us
                                },
                                "clocks": result.environment.get("clocks_under_load"),
                                "time_log": _stage_log(result, "time")[-3000:],
                                # with --match-launches: each worker's later launch against the judge's
                                "launch_kinds": re.findall(_KINDS, _stage_log(result, "setup")),
                            }
                        )
                        out.write_text(json.dumps({warm: runs, **report}, indent=1))  # kept if cut short
                report[warm] = {"runs": runs, "summary": _judged_summary(runs)}
                print("judged", warm, json.dumps(report[warm]["summary"]), flush=True)
        finally:
            standby.close()
    return report


_KINDS = r"a later launch \(us\), worker by worker: (.*)"  # matching.Workers.match's log line


def _stage_log(result, name: str) -> str:  # type: ignore[no-untyped-def]
    return next((st.log for st in result.stages if st.name == name), "")


def _by_first_side(  # type: ignore[no-untyped-def]
    baseline: Sequence[float], candidate: Sequence[float], name: str, result
) -> dict | None:
    """Candidate over baseline median over the chunks that timed each side first (the time
    stage's log says each case's chunk size; judged_timing.first_side: the baseline in even chunks)."""
    from arena.harness.judged_timing import first_side

    log = _stage_log(result, "time")
    size = re.search(rf"case {re.escape(name)}: .*?(\d+) chunk\(s\) of (\d+) calls", log, re.S)
    if not size:
        return None
    per = int(size.group(2))
    split: dict[str, dict[str, list[float]]] = {}
    for side, samples in (("baseline", baseline), ("candidate", candidate)):
        for index in range(0, len(samples), per):
            first = first_side(index // per)
            split.setdefault(first, {"baseline": [], "candidate": []})[side] += list(samples[index : index + per])
    return {
        f"{first}_first": round(statistics.median(s["candidate"]) / statistics.median(s["baseline"]), 4)
        for first, s in split.items()
        if s["candidate"] and s["baseline"]
    }


def _commonest(samples: Sequence[float], top: int = 6) -> list[tuple[float, int]]:
    """The most frequent sample values (us, to the nanosecond) and their counts: event clocks tick
    in steps, which a median or a trimmed mean of a few-us call can sit between."""
    return Counter(round(s, 3) for s in samples).most_common(top)


def _tenths_ratio(baseline: Sequence[float], candidate: Sequence[float]) -> list[float]:
    """Candidate over baseline median in each tenth of the samples, in the order they were timed."""
    tenth = max(1, min(len(baseline), len(candidate)) // 10)
    return [
        round(statistics.median(candidate[i : i + tenth]) / statistics.median(baseline[i : i + tenth]), 4)
        for i in range(0, tenth * 10, tenth)
        if candidate[i : i + tenth] and baseline[i : i + tenth]
    ]


def _judged_summary(runs: dict[str, list[dict]]) -> dict:
    """Per case, from the times the score reads (arena.scoring.stats): the no-op's ratio (mean, CV
    across evaluations), the baseline time's CV, and once/twice per evaluation."""
    summary: dict[str, Any] = {}
    for name in sorted({n for kind in runs.values() for r in kind for n in r["cases"]}):
        noop = [r["cases"][name] for r in runs.get("noop", []) if name in r["cases"]]
        twice = [r["cases"][name] for r in runs.get("twice", []) if name in r["cases"]]  # absent: --kinds noop
        fresh = [r["cases"][name] for r in runs.get("twice_fresh", []) if name in r["cases"]]
        if not noop or ("twice" in runs and not twice):
            summary[name] = "missing"
            continue
        ratios = [c["candidate_us"] / c["baseline_us"] for c in noop]
        halves = [c["candidate_us"] / c["baseline_us"] for c in twice]
        fresh_halves = [c["candidate_us"] / c["baseline_us"] for c in fresh]
        summary[name] = {
            "us": round(statistics.median(c["baseline_us"] for c in noop), 3),
            "noop_ratio": round(statistics.fmean(ratios), 4),
            "noop_ratios": [round(r, 4) for r in ratios],
            "noop_ratio_cv_pct": round(100 * cv(ratios), 3) if len(ratios) > 1 else None,
            "baseline_cv_pct": round(100 * cv([c["baseline_us"] for c in noop]), 3) if len(noop) > 1 else None,
            "once_over_twice": [round(h, 4) for h in halves],
            "once_over_twice_mean": round(statistics.fmean(halves), 4) if halves else None,
            "once_over_twice_fresh": [round(h, 4) for h in fresh_halves],
            "once_over_twice_fresh_mean": round(statistics.fmean(fresh_halves), 4) if fresh_halves else None,
        }
    return summary


def _marker(marks: list, begin: float) -> Callable[[str], None]:
    """A mark function for profile_call: appends (label, seconds since `begin`) to `marks`."""
    return lambda label: marks.append((label, round(time.perf_counter() - begin, 4)))


def profiler_start_cost(calls: int = 3) -> dict:
    """arena.harness.profile.profile_call on one small kernel, `calls` times in this process: is
    the profiler's start (3-5 s inside a harness child) paid once per process or every time?"""
    from arena.harness.profile import profile_call

    x = torch.ones(1 << 20, device="cuda")
    runs = []
    for _ in range(calls):
        begin = time.perf_counter()
        marks: list = []
        operations = profile_call(lambda: x.add_(1), x.device, _marker(marks, begin))
        runs.append({"total_s": round(time.perf_counter() - begin, 4), "marks": marks, "operations": len(operations)})
    return {"runs": runs}


COPY_TASK = """
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def copy(x):
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
    return y
"""


COPY_AGAIN = "    _copy[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)\n"
TWICE_TASK = COPY_TASK.replace("    return y\n", COPY_AGAIN + "    return y\n")  # the same copy launched twice
# The second launch into an output of its own: if once/twice moves to 0.5 with it, what the
# second launch of TWICE_TASK gains is its output already written (cached, its pages mapped).
COPY_ELSEWHERE = "    z = torch.empty_like(x)\n" + COPY_AGAIN.replace("(x, y,", "(x, z,")
TWICE_FRESH_TASK = COPY_TASK.replace("    return y\n", COPY_ELSEWHERE + "    return y\n")
# Each judged kind's baseline; the candidate is the no-op's own copy, launched once.
BASELINES = {"noop": COPY_TASK, "twice": TWICE_TASK, "twice_fresh": TWICE_FRESH_TASK}


def _ratios(result) -> list[float]:  # type: ignore[no-untyped-def]
    """Baseline over candidate median, per timed case."""
    return [
        statistics.median(c.baseline_us) / statistics.median(c.candidate_us) for c in result.cases if c.candidate_us
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", nargs="+", choices=tuple(SIZES), default=list(SIZES))
    parser.add_argument(
        "--part",
        nargs="+",
        choices=("kernels", "profiler", "evaluation", "judged"),
        default=["kernels", "profiler", "evaluation", "judged"],
    )
    parser.add_argument("--judged-sizes", nargs="+", choices=tuple(JUDGED_SIZES), default=list(JUDGED_SIZES))
    parser.add_argument("--warm", nargs="+", choices=WARM_INPUTS, default=list(WARM_INPUTS))
    parser.add_argument("--repeats", type=int, default=4, help="evaluations per setting and kind (judged part)")
    parser.add_argument(
        "--kinds", nargs="+", choices=tuple(BASELINES), default=list(BASELINES), help="baselines of the judged part"
    )
    parser.add_argument(
        "--match-launches",
        type=int,
        default=HarnessSettings.match_launches,
        help="workers the judge may replace to match its launch kind",
    )
    parser.add_argument(
        "--baseline-worker", action="store_true", help="the judged part's baseline timed in a worker of its own"
    )
    args = parser.parse_args()
    device = open_device(select_backend("auto"), 0)
    flushers = {mode: Flusher(device, mode) for mode in MODES}
    overheads = {mode: measure_event_overhead(f) for mode, f in flushers.items()}
    report: dict = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "flush_bytes": flushers["read"].nbytes,
        "event_overhead_us": overheads,
        "kernels": {},
    }
    for name, size in SIZES.items() if "kernels" in args.part else ():
        if name not in args.sizes:
            continue
        entry: dict = {"bytes_copied": size * 4}
        entry["do_bench"] = do_bench_repeats(size, size)
        entry["batched_100"] = batched_repeats(size, size)
        if name != "5us":  # copy of 2B bytes over copy of B bytes: true ratio 2 when bandwidth bound
            entry["do_bench_half"] = do_bench_repeats(size, size // 2)
            entry["batched_100_half"] = batched_repeats(size, size // 2)
            entry["ratio_2x"] = {
                "do_bench": entry["do_bench"]["median_us"] / entry["do_bench_half"]["median_us"],
                "batched_100": entry["batched_100"]["median_us"] / entry["batched_100_half"]["median_us"],
            }
        report["kernels"][name] = entry
        print(name, json.dumps(_headline(entry), default=str), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report["profiler"] = profiler_start_cost() if "profiler" in args.part else {"runs": []}
    print(json.dumps(report["profiler"]), flush=True)
    report["evaluation"] = evaluation_overhead() if "evaluation" in args.part else {"runs": []}
    keys = ("kind", "status", "wall_s", "overhead_s", "speedup", "stages_s")
    print(json.dumps([{k: r[k] for k in keys} for r in report["evaluation"]["runs"]]), flush=True)
    if "judged" in args.part:
        report["judged"] = judged_precision(
            args.repeats, args.judged_sizes, args.warm, args.out, args.kinds, args.match_launches, args.baseline_worker
        )
        args.out.write_text(json.dumps(report, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))


def _headline(entry: dict) -> dict:
    """Median and CV per method and the 2x ratios: the line printed per kernel."""
    line: dict[str, Any] = {
        key: (round(value["median_us"], 3), f"{100 * value['cv']:.3f}%")
        for key, value in entry.items()
        if isinstance(value, dict) and "cv" in value
    }
    line["ratio_2x"] = entry.get("ratio_2x")
    return line


if __name__ == "__main__":
    main()
