"""How precise is the harness's clock? Run on one GPU; writes a JSON report.

    PYTHONPATH=src/python python3 bench/timing_precision.py --out timing.json

Triton copy kernels of about 5 us, 50 us and 500 us are timed three ways, each REPEATS times:
the harness's own loop (arena.harness.timing: per-call events, flush, rotating inputs, A/B
trials) once with each flush mode (a reading pass, the default, and a writing pass) and once
with the GPU-side spin fixed rather than sized from host timings,
triton.testing.do_bench (median), and 100 back-to-back calls inside one event pair.
Reported per kernel: median and CV of each method across repeats; the harness's no-op
(the kernel against itself) speedup; each method's measured ratio of a copy of 2B bytes over a
copy of B bytes (the true ratio is 2 where bandwidth bound); and the overhead of a whole
evaluation (run_harness on a small copy task with a PyTorch reference) beyond its compile and
timing stages: once in a child started cold, then in children a Standby started ahead; and what
starting the profiler costs, the first time in a process and after (--part picks which parts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
import triton
import triton.language as tl
from arena.harness.backends.kernel import Kernel
from arena.harness.device import open_device, select_backend
from arena.harness.flush import MODES, Flusher
from arena.harness.timing import Bench, measure_event_overhead, time_case

REPEATS = 8
FIXED_SPIN_US = 60.0  # above 2x the host's cost of one call on the H200 hosts seen so far
SIZES = {"5us": 1 << 20, "50us": 24 << 20, "500us": 256 << 20}  # float32 elements copied


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def copy_into(src: torch.Tensor, dst: torch.Tensor, n: int) -> None:
    _copy[(triton.cdiv(n, 4096),)](src, dst, n, BLOCK=4096)


def kernel_of(n: int, out: torch.Tensor, label: str) -> Kernel:
    """A harness Kernel copying the first n elements of its input into `out`; returns no outputs."""

    def invoke(inputs, scalars, outputs, dims):  # type: ignore[no-untyped-def]
        copy_into(inputs[0], out, n)
        return ()

    return Kernel(label=label, invoke=invoke, harness_outputs=False)


def cv(values: list[float]) -> float:
    return statistics.pstdev(values) / statistics.mean(values)


def iqr_mean(values: list[float]) -> float:
    """Mean of the samples between the quartiles: resolves below the event timer's quantum."""
    ordered = sorted(values)
    quarter = len(ordered) // 4
    return statistics.mean(ordered[quarter : len(ordered) - quarter])


def harness_repeats(flusher: Flusher, n_a: int, n_b: int, size: int, spin_us: float | None = None) -> dict:
    x = torch.randn(size, device="cuda")
    shadows = [[x], [torch.randn(size, device="cuda")]]
    out = torch.empty(size, device="cuda")
    base, cand = kernel_of(n_a, out, "baseline"), kernel_of(n_b, out, "candidate")
    medians_a, medians_b, calls, iqr_a, iqr_b = [], [], [], [], []
    for _ in range(REPEATS):
        bench = Bench(flusher, shadows, [[], []], [], {}, {})
        timing = time_case(bench, base, cand, trials=3, budget_s=1.0, spin_us=spin_us)
        assert not timing.error, timing.error
        medians_a.append(statistics.median(timing.baseline_us))
        medians_b.append(statistics.median(timing.candidate_us))
        iqr_a.append(iqr_mean(list(timing.baseline_us)))
        iqr_b.append(iqr_mean(list(timing.candidate_us)))
        calls.append(len(timing.baseline_us))
    ratios = [b / a for a, b in zip(medians_a, medians_b)]
    iqr_ratios = [b / a for a, b in zip(iqr_a, iqr_b)]
    return {
        "median_us": statistics.median(medians_a),
        "cv": cv(medians_a),
        "calls_per_side": calls[0],
        "iqr_mean_us": statistics.median(iqr_a),
        "iqr_mean_cv": cv(iqr_a),
        "ratio_b_over_a": ratios,
        "ratio_mean": statistics.mean(ratios),
        "ratio_cv": cv(ratios),
        "iqr_ratio_mean": statistics.mean(iqr_ratios),
        "iqr_ratio_cv": cv(iqr_ratios),
        "iqr_ratio_range": (min(iqr_ratios), max(iqr_ratios)),
        "wall_us": (timing.baseline_wall_us, timing.candidate_wall_us),
    }


def do_bench_repeats(size: int, n: int) -> dict:
    x, out = torch.randn(size, device="cuda"), torch.empty(size, device="cuda")
    values = [
        triton.testing.do_bench(lambda: copy_into(x, out, n), return_mode="median") * 1000
        for _ in range(REPEATS)
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


def evaluation_overhead() -> dict:
    """run_harness on a copy task (one small case, one ~50 us timed case, 1 hidden seed, a PyTorch
    reference): wall and stages of a cold run, then of runs whose child a Standby started ahead
    (each waits as long as a runner lane would: the previous evaluation's length)."""
    from arena.harness.launch import Standby, run_harness
    from arena.harness.settings import HarnessSettings
    from arena.task.task import Case, Category, Entry, Task, TensorSpec
    from arena.task.tolerance import merge_tolerances

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = Path(tmp) / "tasks" / "b" / "copy"
        task_dir.mkdir(parents=True)
        (task_dir / "kernel.py").write_text(COPY_TASK)
        (task_dir / "reference.py").write_text("def copy(x):\n    return x.clone()\n")
        task = Task(
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
                Case("main", {"N": 24 << 20}, "float32", 2, timed=True),
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
        standby = Standby()
        try:
            for kind in ("cold", "cold", "standby", "standby", "standby"):
                begin = time.perf_counter()
                result = run_harness(
                    task, None, Path(tmp), HarnessSettings(timeout_s=300), standby if kind == "standby" else None
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


def profiler_start_cost(calls: int = 3) -> dict:
    """arena.harness.profile.profile_call on one small kernel, `calls` times in this process: is
    the profiler's start (3-5 s inside a harness child) paid once per process or every time?"""
    from arena.harness.profile import profile_call

    x = torch.ones(1 << 20, device="cuda")
    runs = []
    for _ in range(calls):
        begin = time.perf_counter()
        marks: list = []
        operations = profile_call(
            lambda: x.add_(1), x.device, lambda label: marks.append((label, round(time.perf_counter() - begin, 4)))
        )
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--part", nargs="+", choices=("kernels", "profiler", "evaluation"), default=["kernels", "profiler", "evaluation"]
    )
    args = parser.parse_args()
    device = open_device(select_backend("auto"), 0)
    flushers = {mode: Flusher(device, mode) for mode in MODES}
    report: dict = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "flush_bytes": flushers["read"].nbytes,
        "event_overhead_us": {mode: measure_event_overhead(f) for mode, f in flushers.items()},
        "kernels": {},
    }
    for name, size in SIZES.items() if "kernels" in args.part else ():
        entry: dict = {"bytes_copied": size * 4}
        for mode, flusher in flushers.items():
            entry[f"harness_noop_{mode}"] = harness_repeats(flusher, size, size, size)
        # The spin sized per run from host timings, against one fixed length: does the gap before
        # a call move the absolute medians between repeats?
        entry["harness_noop_read_fixed_spin"] = harness_repeats(flushers["read"], size, size, size, FIXED_SPIN_US)
        entry["do_bench"] = do_bench_repeats(size, size)
        entry["batched_100"] = batched_repeats(size, size)
        if name != "5us":  # copy of 2B bytes over copy of B bytes: true ratio 2 when bandwidth bound
            for mode, flusher in flushers.items():
                entry[f"harness_ratio_2x_{mode}"] = harness_repeats(flusher, size // 2, size, size)
            entry["do_bench_half"] = do_bench_repeats(size, size // 2)
            entry["batched_100_half"] = batched_repeats(size, size // 2)
            entry["ratio_2x"] = {
                "do_bench": entry["do_bench"]["median_us"] / entry["do_bench_half"]["median_us"],
                "batched_100": entry["batched_100"]["median_us"] / entry["batched_100_half"]["median_us"],
                **{m: entry[f"harness_ratio_2x_{m}"]["ratio_mean"] for m in MODES},
            }
        report["kernels"][name] = entry
        print(name, json.dumps(_headline(entry), default=str), flush=True)
    report["profiler"] = profiler_start_cost() if "profiler" in args.part else {"runs": []}
    print(json.dumps(report["profiler"]), flush=True)
    report["evaluation"] = evaluation_overhead() if "evaluation" in args.part else {"runs": []}
    print(json.dumps([{k: r[k] for k in ("kind", "status", "wall_s", "overhead_s", "stages_s")} for r in report["evaluation"]["runs"]]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))


def _headline(entry: dict) -> dict:
    """Median and CV per method, no-op ratios and 2x ratios: the line printed per kernel."""
    line = {
        key: (round(value["median_us"], 3), f"{100 * value['cv']:.3f}%")
        for key, value in entry.items()
        if isinstance(value, dict) and "cv" in value
    }
    for mode in MODES:
        noop = entry[f"harness_noop_{mode}"]
        line[f"noop_ratio_{mode}"] = (round(noop["ratio_mean"], 5), f"{100 * noop['ratio_cv']:.3f}%")
    line["ratio_2x"] = entry.get("ratio_2x")
    return line


if __name__ == "__main__":
    main()
