"""Check the HIP task corpus on an NVIDIA GPU: every baseline, exemplar and wrong candidate.

For each hip2hip and torch2hip task this compiles the baseline, the exemplars and the wrong
candidate with nvcc and the project's HIP header (arena_hip.h), calls each launcher through
ctypes per the task's ABI (docs/task-format.md) on CUDA tensors for every case, and compares the
outputs with the task's reference.py: the baseline and the exemplars must pass, the wrong
candidate must fail. On the timed cases it then times the baseline against each exemplar,
interleaved, one CUDA event pair per call, with an L2 flush (2x the L2 size) before every call,
and reports median times; an exemplar must be at least 1.2x faster than the baseline.

This is a check of the corpus, not the harness: it trusts the code it runs.

    PYTHONUNBUFFERED=1 python3 bench/hip_corpus_check.py [--task NAME] [--reps 50] [--json FILE]

Exit status 0 when every expectation holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src" / "python"))

import torch  # noqa: E402

from arena.task.load import read_build_file  # noqa: E402
from arena.task.task import CASE_DTYPE, Case, Task, TensorSpec  # noqa: E402
from arena.task.tolerance import tolerance_for  # noqa: E402

HEADER = REPO / "src" / "python" / "arena" / "harness" / "backends" / "arena_hip.h"
NVCC_FLAGS = ["-O3", "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90"]
MIN_SPEEDUP = 1.2
HIP_CATEGORIES = ("hip2hip", "torch2hip")
DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


@dataclass(frozen=True)
class CheckRow:
    """One candidate on one case: whether it matched the reference, as it was expected to."""

    task: str
    case: str
    candidate: str  # "baseline", "exemplar:<folder>" or "wrong"
    passed: bool  # matched the reference within tolerance
    expected: bool | None  # whether it should have; None: the wrong candidate, which must fail somewhere
    detail: str  # the worst mismatch, or the launcher's error


@dataclass(frozen=True)
class TimeRow:
    """Median times of the baseline and one exemplar on one timed case."""

    task: str
    case: str
    exemplar: str
    baseline_us: float
    exemplar_us: float
    calls: int  # timed calls of each

    @property
    def speedup(self) -> float:
        return self.baseline_us / self.exemplar_us


def load_hip_tasks() -> list[Task]:
    """Every task under tasks/hip2hip and tasks/torch2hip (other categories are not read)."""
    builds = sorted(p for c in HIP_CATEGORIES for p in (REPO / "tasks" / c).rglob("BUILD"))
    return sorted((t for b in builds for t in read_build_file(b, REPO)), key=lambda t: t.address)


# --- building -------------------------------------------------------------------------------


def candidate_sources(task: Task) -> dict[str, Path]:
    """Label -> HIP entry file of the baseline, each exemplar and the wrong candidate."""
    task_dir = REPO / task.task_dir
    sources = {"baseline": task_dir / task.entry.file}
    for folder in task.exemplars:
        sources[f"exemplar:{folder.rsplit('/', 1)[-1]}"] = task_dir / folder / task.entry.file
    if task.wrong:
        sources["wrong"] = task_dir / task.wrong / task.entry.file
    return sources


def compile_source(source: Path, library: Path) -> str:
    """Compile one HIP source to a shared library; the compiler's output on failure, else ""."""
    command = ["nvcc", *NVCC_FLAGS, "-include", str(HEADER), "-x", "cu", str(source), "-o", str(library)]
    done = subprocess.run(command, capture_output=True, text=True)
    return "" if done.returncode == 0 else done.stdout + done.stderr


def compile_all(tasks: list[Task], out_dir: Path) -> dict[tuple[str, str], Path]:
    """(task name, label) -> shared library, compiled in parallel; exits on a compile error."""
    jobs = {
        (task.name, label): (source, out_dir / f"{task.name}-{label.replace(':', '-')}.so")
        for task in tasks
        for label, source in candidate_sources(task).items()
    }
    with ThreadPoolExecutor() as pool:
        errors = dict(zip(jobs, pool.map(lambda job: compile_source(*job), jobs.values())))
    for key, error in errors.items():
        if error:
            sys.exit(f"compile error in {jobs[key][0].relative_to(REPO)}:\n{error}")
    return {key: library for key, (_, library) in jobs.items()}


def load_launcher(library: Path, symbol: str) -> Callable[..., int]:
    function = getattr(ctypes.CDLL(str(library)), symbol)
    function.restype = ctypes.c_int
    return function


# --- test vectors ---------------------------------------------------------------------------


def tensor_dtype(spec: TensorSpec, case: Case) -> torch.dtype:
    return DTYPES[case.dtype if spec.dtype == CASE_DTYPE else spec.dtype]


def tensor_shape(spec: TensorSpec, case: Case) -> tuple[int, ...]:
    return tuple(case.dims[d] if isinstance(d, str) else d for d in spec.shape)


def make_input(spec: TensorSpec, case: Case, generator: torch.Generator, device: str) -> torch.Tensor:
    """One input drawn from its distribution (the case's override, else the declared one)."""
    dist = case.dists.get(spec.name, spec.dist)
    p = dict(dist.params)
    shape, dtype = tensor_shape(spec, case), tensor_dtype(spec, case)
    work = torch.float64 if dtype == torch.float64 else torch.float32
    if dist.kind == "randint":
        high = case.dims[p["high"]] if isinstance(p["high"], str) else p["high"]
        values = torch.randint(int(p["low"]), int(high), shape, generator=generator, device=device)
        return values.to(dtype)
    if dist.kind == "constant":
        return torch.full(shape, float(p["value"]), dtype=dtype, device=device)
    if dist.kind == "uniform":
        low, high = float(p.get("low", 0.0)), float(p.get("high", 1.0))
        values = low + (high - low) * torch.rand(shape, generator=generator, device=device, dtype=work)
    elif dist.kind == "wide":
        low, high = float(p.get("low", -3.0)), float(p.get("high", 3.0))
        exponent = low + (high - low) * torch.rand(shape, generator=generator, device=device, dtype=work)
        sign = torch.randint(0, 2, shape, generator=generator, device=device).to(work) * 2 - 1
        values = sign * torch.pow(10.0, exponent)
    elif dist.kind == "large":
        scale = float(p.get("scale", 1e4))
        values = torch.randn(shape, generator=generator, device=device, dtype=work) * scale
    else:  # normal
        values = torch.randn(shape, generator=generator, device=device, dtype=work)
        values = values * float(p.get("std", 1.0)) + float(p.get("mean", 0.0))
    return values.to(dtype)


def make_inputs(task: Task, case: Case, device: str) -> list[torch.Tensor]:
    generator = torch.Generator(device=device).manual_seed(case.seed)
    return [make_input(spec, case, generator, device) for spec in task.inputs]


def scalar_values(task: Task, case: Case) -> dict[str, float | int]:
    """The task's scalars for `case`: a string value names a dim."""
    return {name: case.dims[v] if isinstance(v, str) else v for name, v in task.scalars.items()}


def poisoned_outputs(task: Task, case: Case, device: str) -> list[torch.Tensor]:
    """Fresh outputs: NaN for floats, 0x5A bytes otherwise, so unwritten elements show."""
    outputs = []
    for spec in task.outputs:
        out = torch.empty(tensor_shape(spec, case), dtype=tensor_dtype(spec, case), device=device)
        if out.is_floating_point():
            out.fill_(float("nan"))
        else:
            out.view(torch.uint8).fill_(0x5A)
        outputs.append(out)
    return outputs


def run_reference(task: Task, case: Case, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    assert task.reference is not None, "HIP tasks in this corpus name a PyTorch reference"
    path = REPO / task.task_dir / task.reference.file
    spec = importlib.util.spec_from_file_location(f"reference_{task.name}", path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = getattr(module, task.reference.symbol)(*inputs, **scalar_values(task, case))
    return list(result) if isinstance(result, (tuple, list)) else [result]


# --- checking and timing --------------------------------------------------------------------


def launcher_args(task: Task, case: Case, tensors: dict[str, torch.Tensor]) -> list[Any]:
    """The launcher's arguments in ABI order, then the stream."""
    scalars = scalar_values(task, case)
    args: list[Any] = []
    for name in task.abi:
        if name in tensors:
            args.append(ctypes.c_void_p(tensors[name].data_ptr()))
        elif name in scalars and isinstance(task.scalars[name], float):
            args.append(ctypes.c_double(scalars[name]))
        else:
            args.append(ctypes.c_int64(int(scalars[name]) if name in scalars else case.dims[name]))
    args.append(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    return args


def compare(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> str:
    """Empty when `got` matches `want` within the tolerance, else a description of the worst element."""
    got64, want64 = got.double(), want.to(got.dtype).double()
    bad_nan = torch.isnan(got64) != torch.isnan(want64)
    error = (got64 - want64).abs().nan_to_num(nan=0.0)
    excess = error - (atol + rtol * want64.abs().nan_to_num(nan=0.0))
    excess = torch.where(bad_nan, torch.full_like(excess, float("inf")), excess)
    worst = int(torch.argmax(excess))
    if float(excess.flatten()[worst]) <= 0:
        return ""
    count = int((excess > 0).sum())
    return (
        f"{count} of {excess.numel()} elements off; worst at {worst}: "
        f"got {float(got64.flatten()[worst])!r}, want {float(want64.flatten()[worst])!r}"
    )


def check_case(task: Task, case: Case, launchers: dict[str, Callable[..., int]]) -> list[CheckRow]:
    inputs = make_inputs(task, case, "cuda")
    wants = run_reference(task, case, [x.clone() for x in inputs])
    rows = []
    for label, launch in launchers.items():
        outputs = poisoned_outputs(task, case, "cuda")
        tensors = {spec.name: t for spec, t in zip(task.inputs + task.outputs, inputs + outputs)}
        status = launch(*launcher_args(task, case, tensors))
        torch.cuda.synchronize()
        if status != 0:
            detail = f"launcher returned {status}"
        else:
            detail = "; ".join(
                d
                for spec, got, want in zip(task.outputs, outputs, wants)
                if (d := compare(got, want, *_tolerance(task, got.dtype)))
            )
        expected = None if label == "wrong" else True
        rows.append(CheckRow(task.name, case.name, label, not detail, expected, detail))
    return rows


def _tolerance(task: Task, dtype: torch.dtype) -> tuple[float, float]:
    name = next(key for key, value in DTYPES.items() if value == dtype)
    tolerance = tolerance_for(task, name)
    return tolerance.atol, tolerance.rtol


def time_case(task: Task, case: Case, launchers: dict[str, Callable[..., int]], reps: int) -> dict[str, list[float]]:
    """Per-call times in microseconds of each launcher, interleaved, L2 flushed before each call."""
    inputs = make_inputs(task, case, "cuda")
    outputs = poisoned_outputs(task, case, "cuda")
    tensors = {spec.name: t for spec, t in zip(task.inputs + task.outputs, inputs + outputs)}
    args = launcher_args(task, case, tensors)
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")
    for launch in launchers.values():  # warm-up: module load, first-launch costs
        for _ in range(3):
            launch(*args)
    events: dict[str, list[tuple[torch.cuda.Event, torch.cuda.Event]]] = {label: [] for label in launchers}
    for _ in range(reps):
        for label, launch in launchers.items():
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            launch(*args)
            end.record()
            events[label].append((start, end))
    torch.cuda.synchronize()
    return {label: [s.elapsed_time(e) * 1000.0 for s, e in pairs] for label, pairs in events.items()}


# --- main -----------------------------------------------------------------------------------


def check_task(task: Task, libraries: dict[tuple[str, str], Path], reps: int) -> tuple[list, list]:
    """Check every candidate on every case, and time baseline against exemplars on timed cases."""
    launchers = {
        label: load_launcher(libraries[(task.name, label)], task.entry.symbol) for label in candidate_sources(task)
    }
    timed = {k: v for k, v in launchers.items() if k == "baseline" or k.startswith("exemplar:")}
    checks: list[CheckRow] = []
    times: list[TimeRow] = []
    for case in task.cases:
        case_checks = check_case(task, case, launchers)
        print_checks(case_checks)
        checks += case_checks
        if case.timed:
            samples = time_case(task, case, timed, reps)
            base = statistics.median(samples.pop("baseline"))
            case_times = [
                TimeRow(task.name, case.name, label, base, statistics.median(values), reps)
                for label, values in samples.items()
            ]
            print_times(case_times)
            times += case_times
        torch.cuda.empty_cache()
    return checks, times


def print_checks(rows: list[CheckRow]) -> None:
    for row in rows:
        mark = "   " if row.expected is None else "ok " if row.passed == row.expected else "BAD"
        verdict = "passes" if row.passed else "fails"
        print(f"  {mark} {row.case:<18} {row.candidate:<26} {verdict}  {row.detail[:150]}")


def print_times(rows: list[TimeRow]) -> None:
    for row in rows:
        mark = "ok " if row.speedup >= MIN_SPEEDUP else "BAD"
        print(
            f"  {mark} {row.case:<18} baseline {row.baseline_us:10.1f} us  "
            f"{row.exemplar} {row.exemplar_us:10.1f} us  speedup {row.speedup:6.2f}x"
        )


def print_summary(times: list[TimeRow]) -> None:
    print("\n| task | timed case | baseline us | exemplar us | speedup |")
    print("|---|---|---|---|---|")
    for r in times:
        print(f"| {r.task} | {r.case} | {r.baseline_us:.1f} | {r.exemplar_us:.1f} | {r.speedup:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", action="append", help="task name (repeatable); default: all HIP tasks")
    parser.add_argument("--reps", type=int, default=50, help="timed calls per candidate and case")
    parser.add_argument("--json", type=Path, help="also write every row to this JSON file")
    parser.add_argument("--compile-only", action="store_true", help="stop after compiling (no GPU needed)")
    args = parser.parse_args(argv)

    tasks = [t for t in load_hip_tasks() if not args.task or t.name in args.task]
    if not tasks:
        sys.exit("no HIP task matches")
    with tempfile.TemporaryDirectory() as out_dir:
        libraries = compile_all(tasks, Path(out_dir))
        print(f"compiled {len(libraries)} candidates of {len(tasks)} tasks")
        if args.compile_only:
            return 0
        torch.backends.cuda.matmul.allow_tf32 = False  # references in true float32
        print(f"device: {torch.cuda.get_device_name(0)}")
        checks: list[CheckRow] = []
        times: list[TimeRow] = []
        for task in tasks:
            print(f"{task.address}")
            task_checks, task_times = check_task(task, libraries, args.reps)
            checks += task_checks
            times += task_times
    print_summary(times)
    if args.json:
        rows = {
            "checks": [asdict(r) for r in checks],
            "times": [{**asdict(r), "speedup": r.speedup} for r in times],
        }
        args.json.write_text(json.dumps(rows, indent=1))
    bad: list[CheckRow | TimeRow] = [r for r in checks if r.expected is not None and r.passed != r.expected]
    bad += [r for r in times if r.speedup < MIN_SPEEDUP]
    wrong_rows = [r for r in checks if r.candidate == "wrong"]
    wrong_never_failed = [t.name for t in tasks if t.wrong and all(r.passed for r in wrong_rows if r.task == t.name)]
    for name in wrong_never_failed:
        print(f"BAD {name}: the wrong candidate passed every case")
    print(f"\n{len(bad)} unexpected rows, {len(wrong_never_failed)} wrong candidates that never failed")
    return 1 if bad or wrong_never_failed else 0


if __name__ == "__main__":
    sys.exit(main())
