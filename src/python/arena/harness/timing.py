"""Timing one case: baseline and candidate interleaved (A B A B), every call flushed and checked.

Per call, with no host sync inside the loop: restore the working inputs from one of K shadow
input sets (rotating, never the same set twice in a row, so a result cached on a pointer or a
shape is wrong) -> flush the last-level cache -> poison harness-allocated outputs -> start event
-> call -> end event -> enqueue the comparison of the outputs with that set's reference. Before
the start event the GPU also spins for about twice the host's measured cost of one call, so the
call is already queued when the start event runs: a slow or busy host cannot leak its launch
latency into a short kernel's time. Warm-up
is the same procedure (so indistinguishable), time-based, and discarded. n = clamp(budget /
(2 * trials * wall per call), 10, 1000). Each call's figure is its event time less the median
time of an empty event pair under the same conditions (1.3-2.9 us on the H200 hosts seen, so
measured, not assumed: left in, it inflates every call and compresses every speedup). A final pass of synchronized calls
measures wall time, the cross-check against work hidden from the events (side streams, deferred
work).
"""

from __future__ import annotations

import collections
import itertools
import random
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from arena.harness.backends.kernel import Kernel
from arena.harness.check import check_output_type, mismatch_mask, poison_, split_outputs, stale_output
from arena.harness.device import disable_persisting_l2
from arena.harness.flush import Flusher
from arena.harness.placement import Held, Spacer
from arena.task.task import Tolerance

_WARMUP_S = 0.05
_MIN_CALLS, _MAX_CALLS = 10, 1000
_WALL_CALLS = 15
_MAX_SPIN_US = 300.0
_MIN_CALL_US = 0.1  # a call's figure after the empty pair is taken off: no kernel runs faster
_calibration: list[float] = []
# Seized: `elapsed_time` and `perf_counter` as they were before any candidate was imported.
_elapsed_ms = torch.cuda.Event.elapsed_time
_clock = time.perf_counter


@dataclass(frozen=True)
class CaseTiming:
    baseline_us: tuple[float, ...]  # per-call event times less the empty pair's, trials concatenated
    candidate_us: tuple[float, ...]
    baseline_wall_us: float  # median of synchronized calls (launch + sync included)
    candidate_wall_us: float
    error: str  # "" when every timed call of both sides matched its reference


class Bench:
    """The data of one timed case: shadow input sets, their references, the working buffers."""

    def __init__(
        self,
        flusher: Flusher,
        shadows: Sequence[Sequence[torch.Tensor]],
        references: Sequence[Sequence[torch.Tensor]],
        tolerances: Sequence[Tolerance],
        scalars: dict,
        dims: dict,
    ) -> None:  # type: ignore[type-arg]
        self.flusher, self.shadows, self.references, self.tolerances = (
            flusher,
            shadows,
            references,
            tolerances,
        )
        self.scalars, self.dims = scalars, dims
        self.working = [t.clone() for t in shadows[0]]
        self.outputs = [torch.empty_like(t) for t in references[0]]  # for HIP launchers
        self.stream = torch.cuda.current_stream()
        self.bad_calls = {
            "baseline": torch.zeros((), dtype=torch.int64, device=self.working[0].device),
            "candidate": torch.zeros((), dtype=torch.int64, device=self.working[0].device),
        }
        self.host_errors: list[str] = []
        self.host_us: list[float] = []  # host time of each invoke (to size the GPU-side spin)
        self.spin_cycles = 0
        self.recent: dict[str, collections.deque[tuple[object, ...]]] = {}  # per kernel: last outputs

    def order(self, n: int, rng: random.Random) -> list[int]:
        sets = len(self.shadows)
        out: list[int] = []
        for _ in range(n):
            choices = [j for j in range(sets) if not out or j != out[-1] or sets == 1]
            out.append(rng.choice(choices))
        return out

    def run(self, kernel: Kernel, order: Sequence[int]) -> tuple[list[float], float]:
        """Per-call event times (us) and the loop's wall time (s) for calls on sets `order`."""
        begin = _clock()
        pairs, host_us = run_calls(
            kernel, order, self.shadows, self.working, self.outputs if kernel.harness_outputs else [],
            lambda k, j, result: self.validate(kernel, result, j), self.flusher, self.spin_cycles,
            self.scalars, self.dims,
        )
        self.host_us += host_us
        torch.cuda.synchronize()
        wall = _clock() - begin
        return [elapsed_us(s, e) for s, e in pairs], wall

    def run_synchronized(self, kernel: Kernel, order: Sequence[int]) -> float:
        """Median wall time (us) of calls each followed by a device-wide sync: sees every stream."""
        walls = []
        for j in order:
            for work, shadow in zip(self.working, self.shadows[j]):
                work.copy_(shadow)
            self.flusher.run()
            torch.cuda.synchronize()
            begin = _clock()
            result = kernel.invoke(self.working, self.scalars, self.outputs, self.dims)
            torch.cuda.synchronize()
            walls.append((_clock() - begin) * 1e6)
            self.validate(kernel, result, j)
        return statistics.median(walls)

    def validate(self, kernel: Kernel, result: object, j: int) -> None:
        if torch.cuda.current_stream() != self.stream:
            self.host_errors.append(f"{kernel.label} changed the current stream")
        if kernel.harness_outputs:
            if result != 0:
                self.host_errors.append(f"{kernel.label} launcher returned error {result}")
            got: Sequence[object] = self.outputs
        else:
            split = split_outputs(result, len(self.references[j]))
            if isinstance(split, str):
                self.host_errors.append(f"{kernel.label}: {split}")
                return
            got = split
        bad = self.bad_calls[kernel.label]
        # The outputs of the last calls stay alive (one per input set), so a stored answer handed
        # back for its set shares their storage, while a fresh one cannot.
        recent = self.recent.setdefault(kernel.label, collections.deque(maxlen=len(self.shadows)))
        for index, (g, want, tol) in enumerate(zip(got, self.references[j], self.tolerances)):
            error = check_output_type(str(index), g, want)
            if not error and not kernel.harness_outputs:
                earlier = [t for held in recent for t in held]
                error = stale_output(str(index), g, self.working, earlier)  # type: ignore[arg-type]
            if error:
                self.host_errors.append(f"{kernel.label}: {error}")
                return
            bad += mismatch_mask(g, want, tol).any()  # type: ignore[arg-type]
        if not kernel.harness_outputs:
            recent.append(tuple(got))


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


def time_case(
    bench: Bench, baseline: Kernel, candidate: Kernel, trials: int, budget_s: float, event_overhead_us: float
) -> CaseTiming:
    """Warm up, then `trials` A/B trials within `budget_s`; `event_overhead_us` (measure_event_overhead)
    is taken off every call's event time."""
    rng = random.Random()
    sides = (baseline, candidate)
    for kernel in sides:
        bench.run(kernel, bench.order(2, rng))
    walls = []
    for kernel in sides:  # warm-up: the timed procedure itself, its samples discarded
        _, wall = bench.run(kernel, bench.order(2, rng))
        calls = max(2, min(500, int(_WARMUP_S / max(wall / 2, 1e-7))))
        _, wall = bench.run(kernel, bench.order(calls, rng))
        walls.append(wall / calls)
    spin_us = min(_MAX_SPIN_US, 2 * statistics.median(bench.host_us) + 5)
    bench.spin_cycles = int(spin_us * cycles_per_us())
    n = max(_MIN_CALLS, min(_MAX_CALLS, int(budget_s / (2 * trials * max(walls)))))
    samples: dict[str, list[float]] = {"baseline": [], "candidate": []}
    for _ in range(trials):
        disable_persisting_l2()
        order = bench.order(n, rng)
        for kernel in sides:  # A then B within each trial: drift hits both alike
            times, _ = bench.run(kernel, order)
            samples[kernel.label] += [max(t - event_overhead_us, _MIN_CALL_US) for t in times]
    wall_order = bench.order(_WALL_CALLS, rng)
    wall_us = {kernel.label: bench.run_synchronized(kernel, wall_order) for kernel in sides}
    torch.cuda.synchronize()
    return CaseTiming(
        baseline_us=tuple(samples["baseline"]),
        candidate_us=tuple(samples["candidate"]),
        baseline_wall_us=wall_us["baseline"],
        candidate_wall_us=wall_us["candidate"],
        error=_timing_error(bench),
    )


def _timing_error(bench: Bench) -> str:
    if bench.host_errors:
        return f"timed call failed: {bench.host_errors[0]}"
    for label, bad in bench.bad_calls.items():
        if int(bad):
            return f"{int(bad)} timed call(s) of the {label} returned outputs that differ from the reference"
    return ""


def hidden_work(timing: CaseTiming) -> str:
    """The wall-clock cross-check: the candidate's synchronized wall time should be explained by
    its event time plus the baseline's own launch/sync overhead; '' or the finding. A finding goes
    into the time stage's log for review: host-side work (an autotuner's launch path) explains it
    as well as work on another stream, which the profiled call judges (profile.py)."""
    base_event = statistics.median(timing.baseline_us)
    cand_event = statistics.median(timing.candidate_us)
    overhead = max(0.0, timing.baseline_wall_us - base_event)
    unexplained = timing.candidate_wall_us - (cand_event + overhead)
    if unexplained > 0.5 * base_event + 20.0:
        return (
            f"wall-clock cross-check: synchronized calls take {timing.candidate_wall_us:.1f} us but events "
            f"show {cand_event:.1f} us (+{overhead:.1f} us launch overhead): work escapes the timed stream"
        )
    return ""


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
    """The mean of the values between the quartiles. GPU event times come in steps (32 ns on the
    H200): a median of them is one of those steps, so two processes' empty pairs read 1.25, 1.28
    or 1.31 us and their difference, 1-2% of a 3 us kernel, went into a no-op's ratio; this mean
    resolves below the step and, like the median, ignores the outliers."""
    ordered = sorted(values)
    quarter = len(ordered) // 4
    return statistics.fmean(ordered[quarter : len(ordered) - quarter])


def measure_event_overhead(flusher: Flusher, count: int = 200) -> float:
    """Interquartile mean time (us) of an empty event pair after a flush, which is how a timed
    call's pair starts too (right behind the GPU work queued before it): what time_case takes off
    each call."""
    stream = torch.cuda.current_stream()
    pairs = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)
    ]
    for start, end in pairs:
        flusher.run()
        start.record(stream)
        end.record(stream)
    torch.cuda.synchronize()
    return interquartile_mean([_elapsed_ms(s, e) * 1000.0 for s, e in pairs])
