"""Does a large kernel's time follow where its inputs and its outputs lie, within one process?

fused_add_rms_norm's no-op reads 0.984-0.988 on its qwen2-7b-16k case on an H100, and
bench/pending_wait_probe.py reads the same chunk 0.5-0.8% slower in a worker-like child than in
its parent, whatever the parent's stream waits on (bench/results/2026-12-06.md, session 35). Both
processes there keep their inputs and their outputs at one place each. The harness moves every
call's inputs (placement.Scatter) but leaves outputs larger than 1 MiB where the caching allocator
puts them, at the same few places for a whole evaluation on each side. If the time follows the
places, "the second process is slower" is one draw of places, not a property of the process.

This probe times the case's baseline in one process on a grid of places, interleaved by round:
its two inputs (x, residual) at IN_PLACES offsets of a pool of its own, and its two outputs
(the kernel's own torch.empty_like) at OUT_PLACES offsets of a reserve the caching allocator
holds free, aimed with a spacer block taken just before the call. Each call is the harness's
procedure: a flush larger than L2, a spin, an event pair. The landed output offsets are checked.

    PYTHONPATH=src/python python3 bench/output_placement_probe.py [--rounds 16] [--calls 4] [--json FILE]

Printed: each input place's and output place's mean over the other axis (trimmed means of
calls, us), the range of each axis in percent, and the spread of one cell from round to round.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
from pathlib import Path
from typing import Any

import torch

from arena.harness.timing import cycles_per_us

REPO_ROOT = Path(__file__).resolve().parent.parent
ADD_RMS_NORM = REPO_ROOT / "tasks/triton2triton/fused_add_rms_norm/kernel.py"
ROWS, HIDDEN = 16384, 3584  # the qwen2-7b-16k-bf16 case
SET_BYTES = 2 * ROWS * HIDDEN * 2  # x and residual, bfloat16
MIB = 1 << 20
# Offsets in MiB: whole large pages far apart, and shifts within a large page.
IN_PLACES = (0, 512, 1024 + 1, 1536 + 0.5, 2048 + 1.5, 2560)
OUT_PLACES = (0, 300, 600 + 1, 900 + 0.5, 1200 + 1.5, 1500)
RESERVE_BYTES = 2048 * MIB  # the spacer's reach plus two outputs of 112 MiB
FLUSH_BYTES = 256 << 20
SPIN_US = 20


def load_kernel() -> Any:
    spec = importlib.util.spec_from_file_location("probe_norm", ADD_RMS_NORM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fused_add_rms_norm


class Grid:
    """The inputs' pool, the outputs' reserve, and one timed call at a pair of places."""

    def __init__(self) -> None:
        self.kernel = load_kernel()
        self.pool = torch.empty(int(max(IN_PLACES) * MIB) + SET_BYTES, dtype=torch.uint8, device="cuda")
        self.weight = torch.randn(HIDDEN, device="cuda").to(torch.bfloat16)
        values = torch.randn(2, ROWS, HIDDEN, device="cuda").to(torch.bfloat16)
        for place in IN_PLACES:
            self.inputs(place).copy_(values)  # the same values at every place
        del values
        self.scratch = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.spin = int(SPIN_US * cycles_per_us())
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # no free block but the reserve, so that best fit cuts from it
        reserve = torch.empty(RESERVE_BYTES, dtype=torch.uint8, device="cuda")
        self.base = reserve.data_ptr()
        del reserve  # held free by the caching allocator: the spacer and the outputs are cut from it
        self.missed = 0
        for _ in range(2):
            self.call(IN_PLACES[0], OUT_PLACES[0])  # compiled, warm
        torch.cuda.synchronize()

    def inputs(self, place: float) -> torch.Tensor:
        start = int(place * MIB)
        return self.pool[start : start + SET_BYTES].view(torch.bfloat16).view(2, ROWS, HIDDEN)

    def call(self, in_place: float, out_place: float) -> tuple[torch.cuda.Event, torch.cuda.Event, list[Any]]:
        """One call, queued: the flush, the spin, the events; what it holds until the round ends."""
        x, residual = self.inputs(in_place).unbind(0)
        spacer = torch.empty(int(out_place * MIB) or 512, dtype=torch.uint8, device="cuda")
        self.scratch.fill_(1)
        torch.cuda._sleep(self.spin)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y, r = self.kernel(x, residual, self.weight, 1e-6)
        end.record()
        landed = min(y.data_ptr(), r.data_ptr()) - self.base
        if (out_place and spacer.data_ptr() != self.base) or abs(landed - int(out_place * MIB)) > 2 * MIB:
            self.missed += 1
        return start, end, [spacer, y, r]


def trimmed(values: list[float]) -> float:
    values = sorted(values)
    cut = len(values) // 10
    return statistics.fmean(values[cut : len(values) - cut])


def run(grid: Grid, rounds: int, calls: int) -> dict[tuple[float, float], list[list[float]]]:
    """Per pair of places, per round, the times of its calls (us)."""
    cells: dict[tuple[float, float], list[list[float]]] = {(i, o): [] for i in IN_PLACES for o in OUT_PLACES}
    order = list(cells)
    for r in range(rounds):
        for key in order if r % 2 == 0 else reversed(order):
            torch.cuda._sleep(int(30_000 * cycles_per_us()))  # the cell's calls queued whole behind it
            pairs = []
            for _ in range(calls):
                start, end, held = grid.call(*key)
                pairs.append((start, end))
                del held  # freed (stream-ordered) before the next call, which lands at the same place
            torch.cuda.synchronize()
            times = [start.elapsed_time(end) * 1000.0 for start, end in pairs]
            cells[key].append(times)
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    grid = Grid()
    cells = run(grid, args.rounds, args.calls)
    mean = {key: trimmed([t for times in rounds for t in times]) for key, rounds in cells.items()}
    by_in = {i: statistics.fmean(mean[(i, o)] for o in OUT_PLACES) for i in IN_PLACES}
    by_out = {o: statistics.fmean(mean[(i, o)] for i in IN_PLACES) for o in OUT_PLACES}
    # A cell's round-to-round spread: the noise either axis's range is read against.
    spread = statistics.median(
        statistics.stdev([statistics.median(times) for times in rounds]) / mean[key] * 100
        for key, rounds in cells.items()
    )
    span = {axis: (max(v.values()) / min(v.values()) - 1) * 100 for axis, v in (("in", by_in), ("out", by_out))}
    print(
        f"{torch.cuda.get_device_name(0)}: {args.rounds} rounds of {args.calls} calls a cell; missed aims {grid.missed}"
    )
    print("inputs at (MiB):  " + "  ".join(f"{p:g}: {v:.2f}" for p, v in by_in.items()) + f"  range {span['in']:.2f}%")
    print(
        "outputs at (MiB): " + "  ".join(f"{p:g}: {v:.2f}" for p, v in by_out.items()) + f"  range {span['out']:.2f}%"
    )
    print(f"one cell's round median, stdev over rounds: {spread:.2f}% (median over cells)")
    if args.json:
        result = {
            "device": torch.cuda.get_device_name(0),
            "rounds": args.rounds,
            "calls": args.calls,
            "missed_aims": grid.missed,
            "by_input_place_us": {str(k): v for k, v in by_in.items()},
            "by_output_place_us": {str(k): v for k, v in by_out.items()},
            "range_percent": span,
            "cell_round_stdev_percent": spread,
            "cells_us": {f"{i}/{o}": v for (i, o), v in mean.items()},
        }
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
