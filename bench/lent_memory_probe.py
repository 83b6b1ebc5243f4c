"""Does a kernel run slower on inputs the judge lends (legacy IPC) than on its own process's memory?

Two no-ops read far below 1.00 on the H200 (2026-12-04): hip2hip/histogram's bytes-256 cases
0.58-0.60 and repository/mini_mlp's llama8b case 0.73, the candidate's worker slower than the
judge on the same code. The worker's timed inputs lie in a block the judge allocates and exports
(shared_gpu.SharedBlock); the judge's baseline reads its own memory. This probe times the same
two kernels, on the same values, in a judge-like parent and in a worker-like child process:

- local: torch tensors of the process's own;
- lent: views of a SharedBlock of 4 GiB, as large as a lent pool (the parent's own block; the
  child's mapping of it by handle); far: the same at the block's far end;
- lent-counts: local inputs, the histogram's counters in the block (a worker's outputs lie in
  the judge's lent slots);
- odd: views of a second block of 4 GiB + 4 KiB allocated as asked, not in whole large pages
  (a lent pool's size before SharedBlock.allocate rounded it; session 22's suspect).
With --flush a buffer larger than L2 is written before every call, as the harness flushes. With
--rewrite a third child is timed while the parent writes the whole block again before each of
its rounds (the judge copies a chunk's inputs into the lent pool just before the worker reads).

Each placement is timed in rounds (interleaved, CUDA events, the median of every call), and the
child's rounds run with the parent idle (blocked on the child's reply) or, with --busy, while the
parent queues a stream of small kernels of its own (a judge that keeps its context busy).

    PYTHONPATH=src/python python3 bench/lent_memory_probe.py [--rounds 6] [--calls 5] [--busy] [--flush] \
        [--warm] [--spin-us US] [--rewrite] [--kernels histogram matmul add_rms_norm paged_gather copy] \
        [--mapped] [--repeats N] [--json FILE]

In the parent, "raw" is a block made as a lent one is (the runtime's cudaMalloc/hipMalloc) but never
exported: if it reads as "local", exporting is what moves a kernel; if as "lent", the allocation.
"torch-pool" and "torch-pool-far" are the near and far layouts of one torch allocation as large as
the lent block, as the judge's placement pool is made (placement.Scatter): session 39 read the
gather 0.3% slower on every large runtime block than on the parent's own 256 MiB tensors, so whether
the judge's pool reads like those tensors or like the blocks decides whether the judge's inputs
explain paged_kv_gather's 0.994. A third child opens nothing: it times the same kernels on tensors
of its own only (placement "alone"), so a second context that maps no memory of the first's is timed
too. With --repeats the whole probe runs N times, each in a fresh parent, and the report adds, per
kernel and placement, every repeat's child over the parent's local figure (session 38:
paged_kv_gather's no-op read 0.993-0.996 in every run, as the single run's parent-local 214.2
against 215.0-215.3 us everywhere else predicts; fused_add_rms_norm's the other way round; one run
cannot tell a role from a draw of the processes).

With --mapped the parent times its own placements twice more: while it has mapped a block of the
lent pool's size that a helper child allocated and exported (as a worker maps the judge's), and
after it unmapped it again. Session 40 read the gather 0.3-0.4% slower on a child's own tensors
when the child had mapped the parent's block than in a child that mapped nothing, but from two
processes; here one process is its own reference, bracketed in time. If mapping a peer's block
slows all of a process's reads, a judge that maps one too sees what its worker sees.

--kernels copy times a single-launch copy of 1 MiB (float32), as bench/timing_precision.py's judged
small copy: its no-op reads 1-5% slow in the worker with warm inputs (sessions 40-41) and within
about 1% cold (session 42). With --warm every call's inputs are read back after the flush, as the
harness does for a call that fits in a quarter of the cache (flush.Flusher.touch); with --spin-us a
spin runs before the start event, so a call of a few us does not time the host's launch. The
placement "lent-inputs" is the worker's: inputs in the lent block, outputs the process's own.

Kernels (--kernels picks some): the histogram task's HIP baseline (compiled with the harness's own
nvcc/hipcc commands) on its bytes-256 case, mini_mlp's Triton matmul on the llama8b case's gate
GEMM (4096 x 4096 by 4096 x 14336, bfloat16), and triton2triton fused_add_rms_norm's baseline on
its qwen2-7b-16k-bf16 case (16384 x 3584 bfloat16, 448 MiB in and out a call; its no-op read
0.980-0.984 on an H100 on 2026-12-06, its outputs from the process's allocator as in the harness),
and triton2triton paged_kv_gather's baseline on its llama3-8b-b8-ctx8k-bf16 case (two 256 MiB page
caches gathered by random block tables; its no-op read 0.993-0.997 once large outputs were moved,
session 36): a gather's reads, page by page, may feel how its memory is mapped as a stream's do not.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Callable

import torch

from arena.harness.backends.hip import compile_hip
from arena.harness.shared_gpu import SharedBlock, as_bytes, runtime
from arena.harness.timing import cycles_per_us

REPO_ROOT = Path(__file__).resolve().parent.parent
HISTOGRAM = REPO_ROOT / "tasks/hip2hip/histogram/kernel.hip"
MATMUL = REPO_ROOT / "tasks/repository/mini_mlp/mini_mlp/ops/matmul.py"
ADD_RMS_NORM = REPO_ROOT / "tasks/triton2triton/fused_add_rms_norm/kernel.py"
PAGED_GATHER = REPO_ROOT / "tasks/triton2triton/paged_kv_gather/kernel.py"
N_VALUES, BINS = 33554433, 256  # the histogram's bytes-256 case
T, H, INNER = 4096, 4096, 14336  # mini_mlp's llama8b case: h (T x H) @ w_gate (H x INNER)
ROWS, HIDDEN = 16384, 3584  # fused_add_rms_norm's qwen2-7b-16k-bf16 case
PAGES, PAGE, HEADS, DIM, SEQS, PER_SEQ = 8192, 16, 8, 128, 8, 512  # paged_kv_gather's llama3-8b-b8-ctx8k-bf16
COPIED = 1 << 18  # float32 elements: the judged small copy of 1 MiB
MiB = 1 << 20
# Offsets, each past the last: the histogram's values and counts, the GEMM's operands, the norm's
# x, residual and weight, the gather's two caches and block tables, the copy's source and destination.
LAYOUT = {
    "x": 0,
    "a": 256 * MiB,
    "b": 320 * MiB,
    "counts": 512 * MiB,
    "rx": 640 * MiB,
    "rres": 768 * MiB,
    "rw": 896 * MiB,
    "kc": 1024 * MiB,
    "vc": 1280 * MiB,
    "bt": 1536 * MiB,
    "cs": 1792 * MiB,
    "cd": 1800 * MiB,
}
SPAN = 2048 * MiB  # one layout's bytes
BLOCK_BYTES = 4096 * MiB  # as large as a lent pool; a second layout lies at its far end
ODD_BYTES = BLOCK_BYTES + 4096  # not a whole number of large pages
FAR = BLOCK_BYTES - SPAN
FLUSH_BYTES = 256 * MiB  # written between calls with --flush (more than the L2 of any GPU here)


KERNELS = ("histogram", "matmul", "add_rms_norm", "paged_gather", "copy")
# What each kernel reads: read back after the flush with --warm.
INPUTS = {
    "histogram": ("x",),
    "matmul": ("a", "b"),
    "add_rms_norm": ("rx", "rres", "rw"),
    "paged_gather": ("kc", "vc", "bt"),
    "copy": ("cs",),
}


def kernels(work: Path, chosen: tuple[str, ...] = KERNELS) -> dict[str, Callable[[dict[str, torch.Tensor]], Any]]:
    """The `chosen` kernels, each a call on a placement's tensors (the histogram built first)."""
    found: dict[str, Callable[[dict[str, torch.Tensor]], Any]] = {}
    if "histogram" in chosen:
        found["histogram"] = _histogram(work)
    if "matmul" in chosen:
        matmul = _module("probe_matmul", MATMUL).matmul
        found["matmul"] = lambda t: matmul(t["a"], t["b"])
    if "add_rms_norm" in chosen:
        norm = _module("probe_add_rms_norm", ADD_RMS_NORM).fused_add_rms_norm
        found["add_rms_norm"] = lambda t: norm(t["rx"], t["rres"], t["rw"], 1e-6)
    if "paged_gather" in chosen:
        gather = _module("probe_paged_gather", PAGED_GATHER).paged_kv_gather
        found["paged_gather"] = lambda t: gather(t["kc"], t["vc"], t["bt"])
    if "copy" in chosen:
        found["copy"] = lambda t: t["cd"].copy_(t["cs"])
    return found


def _histogram(work: Path) -> Callable[[dict[str, torch.Tensor]], None]:
    backend = "rocm" if torch.version.hip else "cuda"
    props = torch.cuda.get_device_properties(0)
    arch = str(props.gcnArchName).split(":")[0] if torch.version.hip else f"sm_{props.major}{props.minor}"
    library = work / "histogram.so"
    if not library.exists():
        built, log = compile_hip(HISTOGRAM, library, backend, arch)
        if not built:
            raise SystemExit(f"the histogram did not compile:\n{log}")
    launcher = ctypes.CDLL(str(library)).histogram
    launcher.restype = ctypes.c_int

    def histogram(t: dict[str, torch.Tensor]) -> None:
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        code = launcher(
            ctypes.c_void_p(t["x"].data_ptr()), ctypes.c_void_p(t["counts"].data_ptr()),
            ctypes.c_int64(N_VALUES), ctypes.c_int64(BINS), stream,
        )  # fmt: skip
        if code:
            raise RuntimeError(f"histogram returned {code}")

    return histogram


def _module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def views(data: torch.Tensor, base: int = 0) -> dict[str, torch.Tensor]:
    """The inputs and the histogram's counts as views of a uint8 block laid out by LAYOUT from `base`."""

    def view(name: str, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
        count = 1
        for size in shape:
            count *= size
        start = base + LAYOUT[name]
        return data[start : start + count * dtype.itemsize].view(dtype).view(shape)

    return {
        "x": view("x", torch.int32, (N_VALUES,)),
        "a": view("a", torch.bfloat16, (T, H)),
        "b": view("b", torch.bfloat16, (H, INNER)),
        "counts": view("counts", torch.int32, (BINS,)),
        "rx": view("rx", torch.bfloat16, (ROWS, HIDDEN)),
        "rres": view("rres", torch.bfloat16, (ROWS, HIDDEN)),
        "rw": view("rw", torch.bfloat16, (HIDDEN,)),
        "kc": view("kc", torch.bfloat16, (PAGES, PAGE, HEADS, DIM)),
        "vc": view("vc", torch.bfloat16, (PAGES, PAGE, HEADS, DIM)),
        "bt": view("bt", torch.int32, (SEQS, PER_SEQ)),
        "cs": view("cs", torch.float32, (COPIED,)),
        "cd": view("cd", torch.float32, (COPIED,)),
    }


def fill(block: dict[str, torch.Tensor]) -> None:
    generator = torch.Generator(device="cuda").manual_seed(47)
    block["x"].copy_(torch.randint(0, BINS, (N_VALUES,), device="cuda", generator=generator, dtype=torch.int32))
    block["a"].copy_(torch.randn(T, H, device="cuda", generator=generator).to(torch.bfloat16))
    block["b"].copy_((torch.randn(H, INNER, device="cuda", generator=generator) * 0.02).to(torch.bfloat16))
    for name, shape in (("rx", (ROWS, HIDDEN)), ("rres", (ROWS, HIDDEN)), ("rw", (HIDDEN,))):
        block[name].copy_(torch.randn(*shape, device="cuda", generator=generator).to(torch.bfloat16))
    for name in ("kc", "vc"):
        block[name].copy_(torch.randn(PAGES, PAGE, HEADS, DIM, device="cuda", generator=generator).to(torch.bfloat16))
    block["bt"].copy_(torch.randint(0, PAGES, (SEQS, PER_SEQ), device="cuda", generator=generator, dtype=torch.int32))
    block["cs"].copy_(torch.randn(COPIED, device="cuda", generator=generator))


@dataclasses.dataclass(frozen=True)
class Procedure:
    """What runs before every timed call: a flush (a buffer larger than L2 written, as the
    harness's), the kernel's inputs read back after it (`warm`), a spin of `spin_us`."""

    flush: bool = False
    warm: bool = False
    spin_us: float = 0.0

    def argv(self) -> list[str]:
        flags = [flag for flag, on in (("--flush", self.flush), ("--warm", self.warm)) if on]
        return flags + (["--spin-us", str(self.spin_us)] if self.spin_us else [])

    def before_call(
        self, scratch: torch.Tensor | None, sink: torch.Tensor, inputs: list[torch.Tensor], spin: int
    ) -> None:
        if scratch is not None:
            scratch.fill_(1)
        if self.warm:
            for tensor in inputs:  # as flush.Flusher.touch: every byte read once
                torch.amax(tensor.reshape(-1).view(torch.uint8), dim=0, out=sink)
        if spin:
            torch.cuda._sleep(spin)


def time_placements(
    places: dict[str, dict[str, torch.Tensor]],
    rounds: int,
    calls: int,
    work: Path,
    procedure: Procedure,
    before_round: Callable[[], None] = lambda: None,
    chosen: tuple[str, ...] = KERNELS,
) -> dict[str, Any]:
    """Median microseconds a call per kernel and placement, the placements interleaved by round,
    each call after the `procedure`."""
    run = kernels(work, chosen)
    scratch = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda") if procedure.flush else None
    spin = int(procedure.spin_us * cycles_per_us()) if procedure.spin_us else 0
    sink = torch.empty((), dtype=torch.uint8, device="cuda")  # what --warm's reads write
    samples: dict[str, list[float]] = {f"{k}/{p}": [] for k in run for p in places}
    for kernel in run.values():
        for tensors in places.values():
            for _ in range(2):
                kernel(tensors)  # compiled, warm
    torch.cuda.synchronize()
    for _ in range(rounds):
        before_round()
        for name, kernel in run.items():
            for place, tensors in places.items():
                for _ in range(calls):
                    procedure.before_call(scratch, sink, [tensors[n] for n in INPUTS[name]], spin)
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    kernel(tensors)
                    end.record()
                    end.synchronize()
                    samples[f"{name}/{place}"].append(start.elapsed_time(end) * 1000.0)
    return {key: round(statistics.median(values), 3) for key, values in samples.items()}


def placements(block: torch.Tensor, odd: torch.Tensor) -> dict[str, dict[str, torch.Tensor]]:
    """local (this process's own tensors), lent (the block's near layout), far (its far layout),
    lent-counts (local inputs, the counts in the block: where a worker's outputs lie), lent-inputs
    (the inputs in the block, the outputs local: where a worker's timed calls find theirs), odd
    (the near layout of the block not allocated in whole large pages)."""
    lent, far = views(block), views(block, FAR)
    local = {name: tensor.clone() for name, tensor in lent.items()}
    return {
        "local": local,
        "lent": lent,
        "far": far,
        "lent-counts": dict(local, counts=lent["counts"]),
        "lent-inputs": dict(lent, counts=local["counts"], cd=local["cd"]),
        "odd": views(odd),
    }


def alone(rounds: int, calls: int, work: Path, procedure: Procedure, chosen: tuple[str, ...]) -> None:
    """A child that maps nothing of the parent's: the kernels on tensors of its own only."""
    data = torch.empty(SPAN, dtype=torch.uint8, device="cuda")
    own = views(data)
    fill(own)
    torch.cuda.synchronize()
    print(json.dumps(time_placements({"alone": own}, rounds, calls, work, procedure, chosen=chosen)), flush=True)


def repeated(argv: list[str], repeats: int, keep: Path | None) -> dict[str, Any]:
    """The probe `repeats` times, each in a fresh process; per kernel and placement, each
    repeat's figure over that repeat's parent's local one. The summary so far is written to
    `keep` after every repeat, so a probe stopped early keeps what it measured."""
    runs: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"runs": runs, "over_parent_local": {}}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(repeats):
            out = Path(folder) / f"run{index}.json"
            subprocess.run([sys.executable, __file__, *argv, "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
            runs.append(json.loads(out.read_text()))
            summary["over_parent_local"] = _over_parent_local(runs)
            if keep:
                keep.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _over_parent_local(runs: list[dict[str, Any]]) -> dict[str, list[float]]:
    over_local: dict[str, list[float]] = {}
    for run in runs:
        for where, table in run.items():
            if not isinstance(table, dict):
                continue
            for key, value in table.items():
                kernel = key.split("/")[0]
                over_local.setdefault(f"{where}: {key}", []).append(round(value / run["parent"][f"{kernel}/local"], 4))
    return over_local


def _rewritten() -> None:
    """Ask the parent to write the block again, and wait until it has (--rewrite)."""
    print("ready", flush=True)
    sys.stdin.readline()


def child(
    handles: list[str],
    rounds: int,
    calls: int,
    work: Path,
    procedure: Procedure,
    rewrite: bool,
    chosen: tuple[str, ...],
) -> None:
    block, odd = (SharedBlock.open(runtime(), bytes.fromhex(h), n) for h, n in zip(handles, (BLOCK_BYTES, ODD_BYTES)))
    places = placements(block.bytes, odd.bytes)
    timed = time_placements(places, rounds, calls, work, procedure, _rewritten if rewrite else lambda: None, chosen)
    print(json.dumps(timed), flush=True)
    block.close()
    odd.close()


def lend() -> None:
    """A helper child (--mapped): allocates a block as large as a lent pool, prints its handle,
    and keeps it until the parent writes a line."""
    block = SharedBlock.allocate(runtime(), BLOCK_BYTES)
    print(block.handle.hex(), flush=True)
    sys.stdin.readline()
    block.close()


def mapped(
    places: dict[str, dict[str, torch.Tensor]], args: argparse.Namespace, work: Path, procedure: Procedure
) -> dict[str, Any]:
    """The parent's placements timed while it has mapped a helper child's block, then again after
    it unmapped it (--mapped)."""
    helper = subprocess.Popen(
        [sys.executable, __file__, "--lend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert helper.stdin is not None and helper.stdout is not None
    try:
        foreign = SharedBlock.open(runtime(), bytes.fromhex(helper.stdout.readline().strip()), BLOCK_BYTES)
        chosen = tuple(args.kernels)
        figures = {
            "parent, a child's block mapped": time_placements(
                places, args.rounds, args.calls, work, procedure, chosen=chosen
            )
        }
        foreign.close()
        figures["parent, unmapped again"] = time_placements(
            places, args.rounds, args.calls, work, procedure, chosen=chosen
        )
    finally:
        helper.communicate("done\n", timeout=60)
    return figures


def _read_into(stream: IO[str], reply: list[str]) -> None:
    reply.append(stream.read())


def busy_until(process: subprocess.Popen[str]) -> str:
    """Queue small kernels on this process's context until the child replies."""
    reply: list[str] = []
    if process.stdout is None:
        raise RuntimeError("the child's output is not a pipe")
    reader = threading.Thread(target=_read_into, args=(process.stdout, reply), daemon=True)
    reader.start()
    scratch = torch.zeros(1 << 16, device="cuda")
    while reader.is_alive():
        for _ in range(64):
            scratch.add_(1.0)
        torch.cuda.synchronize()
    return reply[0]


def rewriting(command: list[str], blocks: tuple[SharedBlock, SharedBlock]) -> dict[str, Any]:
    """The child's figures when this process writes the whole block again before each round."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    for line in process.stdout:
        if line.strip() != "ready":
            process.wait()
            return dict(json.loads(line))
        fill_all(*blocks)
        process.stdin.write("go\n")
        process.stdin.flush()
    raise RuntimeError(f"the child ended without its figures (exit {process.wait()})")


def fill_all(block: SharedBlock, odd: SharedBlock) -> None:
    for data, base in ((block.bytes, 0), (block.bytes, FAR), (odd.bytes, 0)):
        fill(views(data, base))
    torch.cuda.synchronize()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--busy", action="store_true", help="also time the child while this process keeps its GPU busy")
    parser.add_argument("--flush", action="store_true", help="write a buffer larger than L2 before every call")
    parser.add_argument("--warm", action="store_true", help="read each call's inputs back after the flush")
    parser.add_argument("--spin-us", type=float, default=0.0, help="a spin before each call's start event")
    parser.add_argument(
        "--rewrite", action="store_true", help="also time a child whose block is written again before each round"
    )
    parser.add_argument("--kernels", nargs="+", choices=KERNELS, default=list(KERNELS))
    parser.add_argument("--repeats", type=int, default=1, help="the whole probe N times, each in a fresh process")
    parser.add_argument("--mapped", action="store_true", help="also time the parent while it maps a child's block")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lend", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--alone", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    procedure = Procedure(args.flush, args.warm, args.spin_us)
    if args.lend:
        lend()
        return 0
    if args.child:
        child(args.child, args.rounds, args.calls, args.work, procedure, args.rewrite, tuple(args.kernels))
        return 0
    if args.alone:
        alone(args.rounds, args.calls, args.work, procedure, tuple(args.kernels))
        return 0
    if args.repeats > 1:
        argv = ["--rounds", str(args.rounds), "--calls", str(args.calls), "--kernels", *args.kernels]
        switches = (("--busy", args.busy), ("--rewrite", args.rewrite), ("--mapped", args.mapped))
        argv += procedure.argv() + [flag for flag, on in switches if on]
        summary = repeated(argv, args.repeats, args.json)
        for key, ratios in summary["over_parent_local"].items():
            print(f"{key:40s} over the parent's local: " + " ".join(f"{r:.4f}" for r in ratios))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        block = SharedBlock.allocate(runtime(), BLOCK_BYTES)
        odd = SharedBlock.allocate(runtime(), ODD_BYTES, whole_pages=False)
        fill_all(block, odd)
        result: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "procedure": " ".join(procedure.argv())}
        places = placements(block.bytes, odd.bytes)
        pointer = ctypes.c_void_p()
        runtime().call("Malloc", ctypes.byref(pointer), ctypes.c_size_t(SPAN))  # never exported
        places["raw"] = views(as_bytes(int(pointer.value or 0), SPAN))
        fill(places["raw"])
        # The judge's own pool as placement.Scatter makes it: one torch allocation, as large as a lent one.
        pool = torch.empty(BLOCK_BYTES, dtype=torch.uint8, device="cuda")
        places["torch-pool"], places["torch-pool-far"] = views(pool), views(pool, FAR)
        fill(places["torch-pool"])
        fill(places["torch-pool-far"])
        torch.cuda.synchronize()
        result["parent"] = time_placements(places, args.rounds, args.calls, work, procedure, chosen=tuple(args.kernels))
        command = [sys.executable, __file__, "--child", block.handle.hex(), odd.handle.hex(), "--work", str(work)]
        command += ["--rounds", str(args.rounds), "--calls", str(args.calls), "--kernels", *args.kernels]
        command += procedure.argv()
        for mode in ("idle", "busy") if args.busy else ("idle",):
            process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            out = busy_until(process) if mode == "busy" else process.communicate()[0]
            process.wait()
            result[f"child, parent {mode}"] = json.loads(out.strip().splitlines()[-1])
        if args.rewrite:
            result["child, block rewritten"] = rewriting(command + ["--rewrite"], (block, odd))
        if args.mapped:
            result.update(mapped(places, args, work, procedure))
        lone = [sys.executable, __file__, "--alone", "--work", str(work), *command[command.index("--rounds") :]]
        result["child, nothing opened"] = json.loads(
            subprocess.run(lone, stdout=subprocess.PIPE, text=True, check=True).stdout.strip().splitlines()[-1]
        )
        block.close()
        odd.close()
        del places, pool
        runtime().call("Free", pointer)
    for where, table in result.items():
        if isinstance(table, dict):
            print(f"{where:20s} " + "  ".join(f"{key} {value:.2f} us" for key, value in table.items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
