"""The per-call timed procedure both sides of a chunk run (run_calls), and the clocks around it.

The judge (judged_timing.py) runs it for the baseline and the empty calls, the worker for the
candidate; docs/harness.md, "Measurement", says what each step is for.
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Callable, Sequence

import torch

from arena.harness.backends.kernel import Kernel
from arena.harness.check import poison_
from arena.harness.flush import Flusher
from arena.harness.placement import Held, Spacer

_calibration: list[float] = []
# Seized: `elapsed_time` and `perf_counter` as they were before any candidate was imported.
_elapsed_ms = torch.cuda.Event.elapsed_time
_clock = time.perf_counter


def run_calls(
    kernel: Kernel | None,
    order: Sequence[int],
    sets: Sequence[Sequence[torch.Tensor]],
    working: Sequence[torch.Tensor] | None,
    outputs: list[torch.Tensor],  # harness-allocated (HIP); renewed in place every call
    after: Callable[[int, int, object], None],
    flusher: Flusher,
    spin_cycles: int,
    scalars: dict,  # type: ignore[type-arg]
    dims: dict,  # type: ignore[type-arg]
    warm: bool = False,
    spacer: Spacer | None = None,  # the chunk's (placement.Spacer); a new one when None
) -> tuple[list[tuple[torch.cuda.Event, torch.cuda.Event]], list[float]]:
    """The per-call procedure, queued with no host sync: restore the working inputs from set
    order[k] (`working` None: call on the set itself, each set a fresh draw used once) -> spacer
    -> the harness's outputs (HIP) allocated anew while small (the list's items replaced: `after`
    reads them there) -> flush -> poison the harness's outputs -> read the inputs back into the
    cache when `warm` (a small case: flush.warm_limit) -> spin -> start event -> call -> end
    event -> after(k, j, result).
    The judge runs it for the baseline, the worker for the candidate and, with `kernel`
    None, for the empty chunk the judge's clock subtracts. (event pairs, host us of each invoke)."""
    stream = torch.cuda.current_stream()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in order]
    host_us: list[float] = []
    held = Held()  # every call's outputs at a place of their own (placement.py)
    if spacer is None:
        spacer = Spacer(next((t.device for one in sets for t in one if isinstance(t, torch.Tensor)), None))
    for k, j in enumerate(order):
        if working is not None:
            for work, source in zip(working, sets[j]):
                work.copy_(source)
        inputs = sets[j] if working is None else working
        spacer.take()  # this call's small outputs start at its own offset (placement.Spacer)
        held.renew(outputs)
        flusher.run()
        for out in outputs:
            poison_(out)
        if warm:
            flusher.touch(list(inputs))
        if spin_cycles:
            torch.cuda._sleep(spin_cycles)
        pairs[k][0].record(stream)
        result: object = None
        if kernel is not None:
            issued = _clock()
            result = kernel.invoke(inputs, scalars, outputs, dims)
            host_us.append((_clock() - issued) * 1e6)
        pairs[k][1].record(stream)
        after(k, j, result)
        held.keep(result)
        spacer.saw(list(outputs) if outputs else result)
    return pairs, host_us


def empty_launches(cycle: Sequence[int]) -> Kernel | None:
    """Empty kernels (a spin of no cycles) in place of a call: call k launches cycle[k % len] of
    them, None for none at all. Run by the timed procedure, a call with one reads what a kernel
    launch costs a call in this process, with two what a second launch adds behind the first
    (judged_timing.Judge.measure_empty); interleaved in one chunk, drift falls on each alike."""
    if not any(cycle):
        return None
    counts = itertools.cycle(list(cycle))

    def invoke(inputs: object, scalars: object, outputs: object, dims: object) -> tuple[()]:
        for _ in range(next(counts)):
            torch.cuda._sleep(0)
        return ()

    return Kernel(label=f"empty kernels {tuple(cycle)}", invoke=invoke, harness_outputs=False)


def elapsed_us(start: torch.cuda.Event, end: torch.cuda.Event) -> float:
    return _elapsed_ms(start, end) * 1000.0


def cycles_per_us() -> float:
    """GPU clock cycles per microsecond as torch.cuda._sleep counts them (measured once)."""
    if not _calibration:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)  # first launch outside the measurement
        start.record()
        torch.cuda._sleep(1_000_000)
        end.record()
        torch.cuda.synchronize()
        _calibration.append(1_000_000 / max(_elapsed_ms(start, end) * 1000.0, 1e-3))
    return _calibration[0]


def interquartile_mean(values: Sequence[float]) -> float:
    """The mean of the values between the quartiles: GPU event times come in steps, a median is
    one of them, and this mean resolves below the step while, like the median, it ignores the
    outliers (bench/results/2026-11-30.md, session 7)."""
    ordered = sorted(values)
    quarter = len(ordered) // 4
    return statistics.fmean(ordered[quarter : len(ordered) - quarter])


def measure_event_overhead(flusher: Flusher, count: int = 200) -> float:
    """Interquartile mean time (us) of an empty event pair after a flush, which is how a timed
    call's pair starts too (right behind the GPU work queued before it): recorded with the run's
    environment (event_overhead_us)."""
    stream = torch.cuda.current_stream()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    for start, end in pairs:
        flusher.run()
        start.record(stream)
        end.record(stream)
    torch.cuda.synchronize()
    return interquartile_mean([_elapsed_ms(s, e) * 1000.0 for s, e in pairs])
