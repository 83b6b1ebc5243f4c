"""Can the judge clock each of the worker's calls, not only a chunk? (#35 item 7), on a GPU.

    PYTHONPATH=src/python python3 bench/call_clock_probe.py [--chunks 12] [--json FILE]

Each size's row is printed (and the JSON rewritten) as soon as it is done, each chunk's time on
stderr: a run cut short still tells how far the handshake got (session 26's ran to its cut and,
printing only at its end, told nothing).

The judge's chunk clock spans B calls and takes off an estimate of the procedure between them
(flush, spin: 20-200 us a call, an estimate that moves 1-3 us a call from run to run), so a 3 us
kernel is below its noise and a forger of its own samples passes at 1.5x (docs/harness.md, "The
bound"). This probe tries a handshake for every call through stream memory operations on words of
a block the judge lends (cuStreamWriteValue32 / cuStreamWaitValue32: ordered by the GPU, in
whatever order the two hosts queue them):

    worker, call k: flush -> spin -> write ready[k] = g -> wait go[k] >= g -> event s_k -> call
                    -> event e_k -> write done[k] = g
    judge,  call k: wait ready[k] >= g -> copy set k into the lent inputs -> event G_k
                    -> write go[k] = g -> wait done[k] >= g -> event D_k -> copy slot k aside

Call k's inputs land only once its procedure is done, and its output is read the moment it says it
is done: all its work lies between G_k and D_k, on the judge's own events. For an empty call (the
handshake alone) and an add of 2^16, 2^21 and 2^24 floats (about 3, 8 and 45 us), per call: the
worker's sample (e - s), the judge's (D - G), their difference (median, interquartile range), and
the judge's in-process time of the same add behind the same procedure. A difference steady to about
0.3 us a call would let the judge catch a sample 10% under the truth at 3 us, call by call. Each
handshake crosses between the two processes' contexts twice (the GPU time-slices contexts without
MPS): what that costs and how much it varies is the question; the chunk clock pays it twice a chunk.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import torch

from arena.harness.shared_gpu import SharedBlock, runtime

SIZES = (("empty", 0), ("add 2^16", 1 << 16), ("add 2^21", 1 << 21), ("add 2^24", 1 << 24))
CALLS = 48
SPIN_CYCLES = 20_000  # torch.cuda._sleep's count: about 10-20 us
FLUSH_BYTES = 256 << 20  # more than the L2 of any GPU here, written before every call
FLAGS_BYTES = 64 << 10  # ready, go, done: CALLS words each
_WAIT_GEQ, _WRITE_DEFAULT = 0x0, 0x0


class StreamWords:
    """cuStreamWaitValue32 and cuStreamWriteValue32 (the driver's; _v2 where it has them)."""

    def __init__(self) -> None:
        driver = ctypes.CDLL("libcuda.so.1")
        self.wait = getattr(driver, "cuStreamWaitValue32_v2", None) or driver.cuStreamWaitValue32
        self.write = getattr(driver, "cuStreamWriteValue32_v2", None) or driver.cuStreamWriteValue32
        for function in (self.wait, self.write):
            function.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
            function.restype = ctypes.c_int

    def _call(self, function: Any, address: int, value: int, flags: int) -> None:
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        code = function(stream, ctypes.c_uint64(address), ctypes.c_uint32(value), ctypes.c_uint(flags))
        if code:
            raise RuntimeError(f"a stream memory operation failed with CUresult {code}")

    def wait_at_least(self, address: int, value: int) -> None:
        self._call(self.wait, address, value, _WAIT_GEQ)

    def put(self, address: int, value: int) -> None:
        self._call(self.write, address, value, _WRITE_DEFAULT)


class Layout:
    """The lent block: the three flag arrays, then call k's x, y and z, each n floats."""

    def __init__(self, base: int, n: int) -> None:
        self.base, self.n = base, n
        self.tensor_bytes = max(256, -(-n * 4 // 256) * 256)

    def flag(self, name: str, k: int) -> int:
        return self.base + ("ready", "go", "done").index(name) * CALLS * 4 + k * 4

    def offset(self, k: int, which: int) -> int:
        return FLAGS_BYTES + (3 * k + which) * self.tensor_bytes

    def nbytes(self) -> int:
        return self.offset(CALLS, 0)


def views(data: torch.Tensor, layout: Layout) -> list[list[torch.Tensor]]:
    """[x, y, z] of every call, as views of the block's bytes."""
    size = layout.n * 4
    return [
        [data[layout.offset(k, w) : layout.offset(k, w) + size].view(torch.float32) for w in range(3)]
        for k in range(CALLS)
    ]


def procedure(flush: torch.Tensor) -> None:
    flush.fill_(1)
    torch.cuda._sleep(SPIN_CYCLES)


def call(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> None:
    if x.numel():
        torch.add(x, y, out=z)


def worker(handle: str, nbytes: int) -> None:
    """The worker's side: per request line `g n`, its calls queued behind the handshake."""
    block = SharedBlock.open(runtime(), bytes.fromhex(handle), nbytes)
    words, flush = StreamWords(), torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for line in sys.stdin:
        g, n = (int(part) for part in line.split())
        layout = Layout(block.pointer, n)
        sets = views(block.bytes, layout)
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(CALLS)]
        for k, (start, end) in enumerate(pairs):
            procedure(flush)
            words.put(layout.flag("ready", k), g)
            words.wait_at_least(layout.flag("go", k), g)
            start.record()
            call(*sets[k])
            end.record()
            words.put(layout.flag("done", k), g)
        print("queued", flush=True)
        torch.cuda.synchronize()
        print(json.dumps([s.elapsed_time(e) * 1000.0 for s, e in pairs]), flush=True)
    block.close()


def judged_chunk(
    words: StreamWords, layout: Layout, lent: list[list[torch.Tensor]], own: list[list[torch.Tensor]], g: int
) -> tuple[list[float], torch.Tensor]:
    """The judge's side of one chunk: (D - G per call, us; the outputs as read at each `done`)."""
    marks = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(CALLS)]
    seen = torch.empty(CALLS, max(layout.n, 1), device="cuda")
    torch.cuda._sleep(50 * SPIN_CYCLES)  # both hosts queue before the GPU gets here
    for k, (went, done) in enumerate(marks):
        words.wait_at_least(layout.flag("ready", k), g)
        lent[k][0].copy_(own[k][0])
        lent[k][1].copy_(own[k][1])
        went.record()
        words.put(layout.flag("go", k), g)
        words.wait_at_least(layout.flag("done", k), g)
        done.record()
        if layout.n:
            seen[k].copy_(lent[k][2])
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1000.0 for a, b in marks], seen


def in_process(own: list[list[torch.Tensor]], flush: torch.Tensor) -> list[float]:
    """The judge's own time of the same calls behind the same procedure (no handshake)."""
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(CALLS)]
    for (start, end), (x, y, z) in zip(pairs, own):
        procedure(flush)
        start.record()
        call(x, y, z)
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in pairs]


def summary(values: list[float]) -> dict[str, float]:
    q = statistics.quantiles(values, n=4)
    return {"median": statistics.median(values), "iqr": q[2] - q[0], "min": min(values), "max": max(values)}


def probe(chunks: int, report: Any = None) -> list[dict[str, Any]]:
    """Every size's row; `report(row)` as each is done (a run cut short still says what it had)."""
    largest = Layout(0, max(n for _, n in SIZES))
    block = SharedBlock.allocate(runtime(), largest.nbytes())
    block.bytes[:FLAGS_BYTES].zero_()
    torch.cuda.synchronize()
    child = subprocess.Popen(
        [sys.executable, __file__, "--worker", block.handle.hex(), str(block.nbytes)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    words, flush = StreamWords(), torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    rows, g = [], 0
    for label, n in SIZES:
        layout = Layout(block.pointer, n)
        lent = views(block.bytes, layout)
        own = [
            [torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), torch.empty(n, device="cuda")]
            for _ in range(CALLS)
        ]
        judged, sampled, local, wrong = [], [], [], 0
        for chunk in range(chunks + 1):  # the first: compiled and warm, dropped
            begun = time.monotonic()
            g += 1
            child.stdin.write(f"{g} {n}\n")
            child.stdin.flush()
            if child.stdout.readline().strip() != "queued":
                raise RuntimeError("the worker did not queue its chunk")
            spans, seen = judged_chunk(words, layout, lent, own, g)
            samples = json.loads(child.stdout.readline())
            mine = in_process(own, flush)
            if n:
                wrong += sum(1 for k in range(CALLS) if not torch.equal(seen[k, :n], own[k][0] + own[k][1]))
            if chunk:
                judged += spans
                sampled += samples
                local += mine
            # On stderr as it goes: a hang in the handshake shows where, a slow one how slow.
            print(
                f"{label}: chunk {chunk} of {chunks} in {time.monotonic() - begun:.2f} s", file=sys.stderr, flush=True
            )
        differences = [j - s for j, s in zip(judged, sampled)]
        rows.append(
            {
                "kernel": label,
                "worker_sample_us": summary(sampled),
                "judge_span_us": summary(judged),
                "judge_less_sample_us": summary(differences),
                "judge_in_process_us": summary(local),
                "outputs_not_ready_at_done": wrong,
            }
        )
        if report is not None:
            report(rows[-1])
    child.stdin.close()
    child.wait(timeout=60)
    block.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=12)
    parser.add_argument("--json", help="write the rows as JSON to this file")
    parser.add_argument("--worker", nargs=2, metavar=("HANDLE", "NBYTES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not torch.cuda.is_available() or torch.version.hip:
        sys.exit("call_clock_probe.py needs an NVIDIA GPU (the driver's stream memory operations)")
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return
    print(
        f"{'kernel':10} {'sample':>8} {'judge D-G':>10} {'D-G less sample':>16} {'iqr':>6} "
        f"{'in-process':>10} {'not ready':>9}",
        flush=True,
    )
    done: list[dict[str, Any]] = []

    def report(r: dict[str, Any]) -> None:  # each row as its size ends, the JSON rewritten with it
        print(
            f"{r['kernel']:10} {r['worker_sample_us']['median']:8.2f} {r['judge_span_us']['median']:10.2f} "
            f"{r['judge_less_sample_us']['median']:16.2f} {r['judge_less_sample_us']['iqr']:6.2f} "
            f"{r['judge_in_process_us']['median']:10.2f} {r['outputs_not_ready_at_done']:9d}",
            flush=True,
        )
        done.append(r)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(done, out, indent=2)

    probe(args.chunks, report)


if __name__ == "__main__":
    main()
