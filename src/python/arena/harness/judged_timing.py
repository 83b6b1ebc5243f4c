"""Timing one case across the process boundary: the baseline in the judge, the candidate in its
worker, every candidate call checked by the judge and its timings bounded by the judge's clock.

Per trial, per chunk of B calls (B as large as the memory budget allows, up to the trial's n):
1. the judge draws B fresh input sets (new seeds: every timed call of either side gets inputs no
   call has seen, so no stored answer can match) and keeps them as drawn; its own copies go to
   random places of its pool (placement.py);
2. freeze the worker; a probe kernel of the judge's must run at its calibrated speed (GPU work
   the candidate left running would share the GPU with the baseline); time the baseline on its
   copies (timing.run_calls, the chunk queued whole behind a spin as the worker's is behind `go`:
   lent.Lent.ahead), keeping each call's outputs as that set's reference (the baseline passed
   the check stage against the task's reference);
3. thaw the worker; the chunk clock: the judge spins its stream long enough for the worker to
   queue the whole chunk (on places of a pool the judge lends it, empty still), then copies the
   sets into that pool, records `start` and an interprocess `go`: the worker's inputs exist
   nowhere it can reach before the GPU is about to run its calls, so no code of the candidate's
   can work on them before the clock (docs/harness.md, cheat 29). The worker's stream waits on
   `go`, runs the same per-call procedure (its own event pair per call: the samples), copies
   each call's outputs into the judge's slots and records `done`; the judge's stream waits on
   `done` and records `end`;
4. the judge compares every slot, as its stream copied them right after `done` and before
   `end`, with its reference.
Every other chunk runs 3 before 2: neither side is always timed second. The copies of the
worker's sets must take about as long as the judge's copies of its own (_COPY_SLOWER): GPU work
of the candidate's beside them, on the sets as they land, would slow them.
The worker's samples are its own: they can only flatter the candidate. The bound: the chunk's
span on the judge's clock, less the same procedure without calls (the empty chunk: run through
the worker, two context switches included, before the candidate was loaded, for every timed
case's layout), must be explained by the samples; a candidate whose samples claim less work than
the judge saw is CHEAT_DETECTED. How closely the chunk clock follows in-process events:
bench/results/2026-11-30.md, "Harness v2 on the H200" (bench/ipc_probe.py).
"""

from __future__ import annotations

import contextlib
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Iterator, Protocol, Sequence

import torch

from arena.harness.backends.kernel import Kernel
from arena.harness.baseline_apart import BaselineApart
from arena.harness.bound import (
    Foul,
    bound_slack,
    chunk_claims,
    chunk_excess,
    exceeds_bound,
    first_fair,
    paired_excess,
)
from arena.harness.candidate_worker import CandidateWorker
from arena.harness.chunk_clock import ChunkClock
from arena.harness.device import Device, disable_persisting_l2
from arena.harness.families import inputs_for
from arena.harness.flush import warm_limit
from arena.harness.lent import Layout, Lent, QueueBlocked, Seeds
from arena.harness.student_t import t975
from arena.harness.timing import interquartile_mean
from arena.harness.verdict import Verdict
from arena.task.task import Case, Task, Tolerance

# Per chunk: the sets as drawn, both sides' placed copies, the output slots and the references.
CHUNK_BYTES = 4 << 30
# Calls per chunk at most: the whole chunk is queued behind `go`, and a stream's queue of pending
# launches is finite (docs/harness.md, "Why each constant").
CHUNK_CALLS = 48
# Fresh input bytes per side per timed case at most: large inputs get fewer calls (at least
# _MIN_CALLS a trial), not seconds of drawing (docs/harness.md, "Why each constant").
FRESH_BYTES = 16 << 30
_MIN_CALLS, _MAX_CALLS = 10, 1000
_MIN_CALL_US = 0.1
EMPTY_CALLS = 64  # calls in the empty chunk measured for each timed case
# The spin ahead of each call's event pair, timed and empty alike, so that a pair is read behind a
# spin, not behind the flush; short, since every chunk is queued whole before the GPU reaches it
# (`go`, Lent.ahead) and a longer spin's price entered the samples (docs/harness.md).
SPIN_US = 20.0
PAIR_ROUNDS = 3  # each side's readings (pair, launches): about this x EMPTY_CALLS calls each, 3+ chunks
LAUNCH_CYCLE = (0, 1, 2)  # empty kernels in the empty calls' pairs, interleaved call by call
# Calls in one chunk of those pairs at most: a stream's queue of launches behind `go` is finite
# (bench/results/2026-12-02.md, session 13).
PAIR_CHUNK_CALLS = 63
# A process's cost of a later launch in a stream (the third to the eighth empty kernel of a call)
# is its own for its life, and fresh processes come in two kinds about 0.15 us apart on an H100
# (bench/results/2026-12-07.md): a call of n launches keeps (n - 1) x the difference between the
# judge's and the worker's. Read as (8 kernels - 2) / 6, in chunks of KIND_CHUNK_CALLS calls (the
# stream's queue) and KIND_ROUNDS chunks a side; within KIND_MATCH_US the two are one kind.
KIND_CYCLE, KIND_CHUNK_CALLS, KIND_ROUNDS, KIND_MATCH_US = (2, 8), 32, 6, 0.05
# The fewest calls a chunk is cut to when the candidate's launches fill the stream's queue.
_MIN_CHUNK_CALLS = 6
# The copies of the worker's sets, just before `go`, against the judge's copies of its own (the
# same bytes): slower than this share, plus a little a chunk, and something shared the GPU then.
_COPY_SLOWER, _COPY_US = 1.5, 20.0
# A case stops early, after an even count of at least _STOP_CHUNKS chunks, once the 95% interval
# of the speedup over its chunks is within _STOP_WIDTH of it either way (issue #36: seconds per
# evaluation; the chunk, not the call, is the unit, so drift between chunks counts).
_STOP_CHUNKS, _STOP_WIDTH = 6, 0.005


@dataclass(frozen=True)
class JudgedTiming:
    # Each side's samples less its own launch reading plus a launch in a stream (side_offsets):
    # the score's figures, which the bound reads too (claim).
    baseline_us: tuple[float, ...]
    candidate_us: tuple[float, ...]  # the worker's samples
    baseline_mean_us: float
    judged_us: float  # the candidate's time per call on the judge's clock
    chunks: int
    calls_a_chunk: int  # the chunks' calls (b): the score's interval resamples chunk pairs
    log: str


@dataclass
class _Tally:
    """A case's timed chunks as they come in: each side's samples (offsets taken off), the span of
    each chunk on the judge's clock and what the worker's samples claim of it, and how they ran."""

    baseline: list[float] = field(default_factory=list)
    candidate: list[float] = field(default_factory=list)
    spans: list[float] = field(default_factory=list)
    baseline_spans: list[float] = field(default_factory=list)  # the judge's clock around its baseline calls
    spin_us: float = 0.0  # the spin's cost a call, measured with the worker frozen
    late: int = 0  # the judge's chunks the GPU reached before their host had queued them
    lead_ms: float = 0.0
    copies_us: dict[str, list[float]] = field(default_factory=dict)  # Lent.copies_us
    ratios: list[float] = field(default_factory=list)  # per chunk: the baseline's time over the candidate's
    log: list[str] = field(default_factory=list)


@dataclass
class _Series:
    """One series of a case's timed chunks and the bound's figures over it, us."""

    tally: _Tally
    b: int  # calls a chunk
    empty: float  # the empty procedure and the spin, over every call
    judged: float  # the judge's clock over the chunks, less `empty` and the switches
    claimed: float  # what the candidate's samples account for (claim)
    excess: list[float]  # chunk by chunk (chunk_excess)

    @property
    def calls(self) -> int:
        return self.b * len(self.tally.spans)


class Judge:
    """What the judge keeps across cases: the chunk clock (its worker, events and probe) and,
    per timed case, the calibrations measure_empty takes before the candidate is loaded."""

    def __init__(self, device: Device, worker: CandidateWorker, task: Task, warm_inputs: str = "small") -> None:
        self.device, self.worker, self.task = device, worker, task
        self.clock = ChunkClock(device, worker, task)
        self.warm_bytes = warm_limit(device, warm_inputs)
        self.empty_phases: dict[str, str] = {}  # per timed case: what measure_empty spent, for the log
        self.input_bytes: dict[str, int] = {}  # per case: one call's input bytes
        self.switch_us = 0.0
        self.empty_us: dict[str, float] = {}  # per timed case: the empty procedure's cost a call
        # Per timed case: the same empty calls queued by the judge itself, a call (the baseline's
        # side of bound.paired_excess).
        self.judge_empty_us: dict[str, float] = {}
        # Per timed case: each side's empty event pair, read in its own process by one procedure,
        # the timed calls' own with no call (measure_empty): for the log (both the score and the
        # bound take each side's launch reading off instead).
        self.worker_pair_us: dict[str, float] = {}
        self.judge_pair_us: dict[str, float] = {}
        # Per timed case: each side's timed procedure around one empty kernel (its pair and a
        # launch that follows the spin: what a call costs a side beyond its work, in that process),
        # and what a second empty kernel adds behind the first, both sides' mean (a launch in a
        # stream of calls). time_case takes the first off its side's samples and adds the second.
        self.launch_us: dict[str, dict[str, float]] = {}
        self.stream_us: dict[str, float] = {}
        self.stream_side_us: dict[str, dict[str, float]] = {}  # each side's second kernel, for the log
        self.l2_unavailable = ""  # why the persisting-L2 reset failed, once it has (reset_l2)
        # settings.baseline_worker: the baseline's own worker (baseline_apart.py), which then
        # stands for the judge's side in every figure above; its two context switches a chunk.
        self.apart: BaselineApart | None = None
        self.apart_switch_us = 0.0

    def use_worker(self, worker: CandidateWorker) -> None:
        """A fresh worker in place of the first, before any case is measured (matching.Workers.match):
        the clock's events, flusher and probe stay; each chunk binds the worker anew."""
        self.worker = self.clock.worker = worker

    def reset_l2(self) -> str:
        """Persisting L2 limited to 0 and its lines dropped, before every timed chunk (cheat 18,
        docs/harness.md); CUDA only, ROCm has none. '' or, the first time only, why it could not:
        a note for the time stage's log (later chunks skip a reset that cannot run)."""
        if self.device.backend != "cuda" or self.l2_unavailable:
            return ""
        self.l2_unavailable = disable_persisting_l2()
        return self.l2_unavailable

    def measure_empty(self, case: Case, reference_like: Sequence[torch.Tensor]) -> None:
        """Before the candidate is loaded (only harness code runs in the worker): the chunk clock
        around an empty chunk (two context switches) and around EMPTY_CALLS empty calls of `case`
        (each: flush, event pair, outputs handed over) through the worker; then each side's empty
        event pair, the same empty calls with a spin ahead of each pair, and each side's launch
        readings: the same with one and with two empty kernels between the events. No inputs: no
        call."""
        began = time.perf_counter()
        if not self.switch_us:
            with Lent(self.clock, case, Layout.of([], 1), None, {}, {}, 0) as lent:
                self.switch_us = statistics.median(lent.clocked(0, calls=False)[0] for _ in range(5))
        if self.apart is not None and not self.apart_switch_us:  # its own guard: a step taken again
            with self._apart_lent(case, Layout.of([], 1), 0) as other:
                assert other is not None
                self.apart_switch_us = statistics.median(self._apart_empty(other, 0, 5)[0])
        count = _empty_count(reference_like)
        warm = self.warm(case, reference_like)  # the empty calls touch one drawn set, when warm
        clocked, judged = [], []  # the worker's and the judge's, in turn: a drift falls on both
        layout = Layout.of(reference_like, count)
        with (
            Lent(self.clock, case, layout, None, {}, {}, 0, warm=warm) as lent,
            self._apart_lent(case, layout, 0, warm=warm) as other,
        ):
            for _ in range(3):
                clocked.append(lent.clocked(count, calls=False)[0])
                if other is None:
                    lent.empty_pairs(count, 1)
                    judged.append(lent.ahead_us)
                else:
                    judged.append(self._apart_empty(other, count, 1)[0][0] - self.apart_switch_us)
        self.empty_us[case.name] = max(0.0, statistics.median(clocked) - self.switch_us) / count
        self.judge_empty_us[case.name] = max(0.0, statistics.median(judged)) / count
        spans_done = time.perf_counter()
        # The pairs: the same empty calls with a spin ahead of each pair, on each side in turn, with
        # no, one and two empty kernels between the events, interleaved (LAUNCH_CYCLE) in chunks of
        # up to PAIR_CHUNK_CALLS (call k hands over in slot k % count), about PAIR_ROUNDS x count
        # calls a reading: a chunk costs the same whatever its calls, so fewer chunks a side
        # (bench/results/2026-12-02.md, session 13).
        readings, rounds, calls = self._launch_readings(case, reference_like, count, warm, LAUNCH_CYCLE)
        self.worker_pair_us[case.name], self.judge_pair_us[case.name] = readings["worker"][0], readings["judge"][0]
        self.launch_us[case.name] = {side: values[1] for side, values in readings.items()}
        self.stream_side_us[case.name] = {side: values[2] - values[1] for side, values in readings.items()}
        self.stream_us[case.name] = statistics.fmean(self.stream_side_us[case.name].values())
        self.empty_phases[case.name] = (
            f"{count} calls a chunk; switches and empty chunks {spans_done - began:.2f} s, "
            f"pairs and launches {time.perf_counter() - spans_done:.2f} s in {rounds} chunks of {calls} a side"
        )

    def _launch_readings(
        self,
        case: Case,
        reference_like: Sequence[torch.Tensor],
        count: int,
        warm: bool,
        cycle: Sequence[int],
        chunk_calls: int = PAIR_CHUNK_CALLS,
        rounds_at_least: int = PAIR_ROUNDS,
    ) -> tuple[dict[str, list[float]], int, int]:
        """Each side's empty calls with cycle[k % len] empty kernels between the events of call k,
        behind a spin, the worker's chunks and then the judge's: ({side: the interquartile mean
        with each count of `cycle`}, rounds, calls a chunk)."""
        spin = int(SPIN_US * self.clock.cycles)
        width = len(cycle)
        calls = width * max(1, min(count, chunk_calls // width))
        rounds = max(rounds_at_least, round(PAIR_ROUNDS * count / (calls // width)))
        layout = Layout.of(reference_like, count)
        with (
            Lent(self.clock, case, layout, None, {}, {}, spin, warm=warm) as lent,
            self._apart_lent(case, layout, spin, warm=warm) as other,
        ):
            worker = [
                float(t)
                for _ in range(rounds)
                for t in lent.clocked(calls, calls=False, launches=cycle)[1].get("times_us", [])
            ]
            if len(worker) != rounds * calls or not all(math.isfinite(t) and t >= 0 for t in worker):
                raise Verdict("RUNTIME_ERROR", "the worker's empty chunk did not return one time per empty call")
            if other is None:
                judge = lent.empty_pairs(calls, rounds, cycle)
            else:
                judge = self._apart_empty(other, calls, rounds, cycle)[1]
        return (
            {side: _by_launches(times, width) for side, times in (("judge", judge), ("worker", worker))},
            rounds,
            calls,
        )

    def later_launch_us(self, case: Case, reference_like: Sequence[torch.Tensor]) -> dict[str, float]:
        """Each side's cost of a later launch in a stream (KIND_CYCLE), on `case`'s layout, before
        the candidate is loaded: {"judge": us, "worker": us} (matching.Workers.match)."""
        count = _empty_count(reference_like)
        warm = self.warm(case, reference_like)
        readings, _, _ = self._launch_readings(
            case, reference_like, count, warm, KIND_CYCLE, KIND_CHUNK_CALLS, KIND_ROUNDS
        )
        few, many = KIND_CYCLE
        return {side: (values[1] - values[0]) / (many - few) for side, values in readings.items()}

    def _apart_lent(
        self,
        case: Case,
        layout: Layout,
        spin: int,
        scalars: dict[str, Any] | None = None,
        dims: dict[str, Any] | None = None,
        warm: bool = False,
        queue_us: float = 0.0,
    ) -> ContextManager[Lent | None]:
        """The baseline's own worker's lent block laid out as `layout` (settings.baseline_worker),
        or None where the judge times the baseline itself."""
        if self.apart is None:
            return contextlib.nullcontext(None)
        return self.apart.lent(case, layout, scalars or {}, dims or {}, spin, queue_us, warm)

    def _apart_empty(
        self, other: Lent, calls: int, rounds: int, launches: Sequence[int] = (0,)
    ) -> tuple[list[float], list[float]]:
        """`rounds` empty chunks of `calls` calls in the baseline's own worker, the candidate's
        frozen as when the baseline is timed: (each chunk's span us, each empty call's time us)."""
        spans: list[float] = []
        times: list[float] = []
        self.worker.freeze()
        try:
            for _ in range(rounds):
                span, reply = other.clocked(calls, calls=False, launches=launches)
                spans.append(span)
                times += [float(t) for t in reply.get("times_us", [])]
        finally:
            self.worker.thaw()
        if len(times) != rounds * calls or not all(math.isfinite(t) and t >= 0 for t in times):
            raise RuntimeError("the baseline's own worker did not return one time per empty call")
        return spans, times

    @contextlib.contextmanager
    def checking(
        self,
        case: Case,
        reference_like: Sequence[torch.Tensor],
        scalars: dict,  # type: ignore[type-arg]
        dims: dict,  # type: ignore[type-arg]
    ) -> Iterator[Lent]:
        """A lent block for the checked calls of `case` (Lent.checked_call): the slots, pool, spin
        and warming of its timed chunks, one call a chunk, no baseline (docs/harness.md, cheat 28)."""
        warm = self.warm(case, reference_like)
        spin = int(SPIN_US * self.clock.cycles)
        with Lent(self.clock, case, Layout.of(reference_like, 1), None, scalars, dims, spin, warm=warm) as lent:
            yield lent

    def warm(self, case: Case, reference_like: Sequence[torch.Tensor]) -> bool:
        """Whether `case`'s calls get their inputs read back after the flush (flush.warm_limit)."""
        if case.name not in self.input_bytes:
            sample = inputs_for(self.task, case, 0, self.clock.device.torch_device, fresh=True)
            self.input_bytes[case.name] = sum(t.nbytes for t in sample)
            del sample
        return self.input_bytes[case.name] + sum(t.nbytes for t in reference_like) <= self.warm_bytes

    def time_case(
        self,
        baseline: Kernel,
        case: Case,
        seeds: Seeds,
        reference_like: Sequence[torch.Tensor],
        tolerances: Sequence[Tolerance],
        scalars: dict,  # type: ignore[type-arg]
        dims: dict,  # type: ignore[type-arg]
        trials: int,
        budget_s: float,
    ) -> JudgedTiming:
        """Each side's samples less its own launch reading, plus what a launch costs in a stream
        (measure_empty, side_offsets): a call's figure is what it adds to a stream of calls, and
        each process's own launch offset cancels (bench/results/2026-12-01.md, session 11). The
        bound reads the same figures under the score's outlier rule (claim): what the score
        believes is what the judge's clock must have seen."""
        warm = self.warm(case, reference_like)
        per_call = max(1, 3 * self.input_bytes[case.name] + 4 * sum(t.nbytes for t in reference_like))
        b_warm = max(2, min(32, CHUNK_BYTES // per_call))
        self._apart_first_calls(case, seeds, reference_like, scalars, dims, warm)
        with Lent(self.clock, case, Layout.of(reference_like, b_warm), baseline, scalars, dims, 0, warm=warm) as lent:
            walls, hosts = lent.warm_up(seeds)
        by_time = int(budget_s / (2 * trials * max(walls)))
        n = max(_MIN_CALLS, min(_MAX_CALLS, by_time, FRESH_BYTES // (trials * max(1, self.input_bytes[case.name]))))
        b = max(1, min(n, CHUNK_CALLS, CHUNK_BYTES // per_call))
        lent_args = (baseline, scalars, dims, int(SPIN_US * self.clock.cycles), walls[1] * 1e6, warm)
        try:
            series, fouls = first_fair(
                # each series draws fresh sets (`seeds` counts on)
                lambda: self._series(
                    case.name,
                    *self._chunks_that_queue(case, reference_like, lent_args, seeds, tolerances, trials, n, b),
                ),
                lambda series: self._foul(case.name, series),
            )
        except Foul as foul:
            raise Verdict("CHEAT_DETECTED", str(foul)) from None
        tally, b, calls = series.tally, series.b, series.calls
        tally.log += [f"a series called foul, timed again on fresh sets: {why}" for why in fouls]
        tally.log.append(
            self._describe(case, reference_like, warm, tally, b, series.judged / calls, series.claimed / calls, hosts)
        )
        tally.log += self._bound_notes(case.name, series)
        return JudgedTiming(
            baseline_us=tuple(tally.baseline),
            candidate_us=tuple(tally.candidate),
            baseline_mean_us=statistics.fmean(tally.baseline),
            judged_us=max(series.judged / calls, _MIN_CALL_US),
            chunks=len(tally.spans),
            calls_a_chunk=b,
            log="\n".join(tally.log),
        )

    def _apart_first_calls(
        self,
        case: Case,
        seeds: Seeds,
        reference_like: Sequence[torch.Tensor],
        scalars: dict[str, Any],
        dims: dict[str, Any],
        warm: bool,
    ) -> None:
        """settings.baseline_worker: the baseline's first calls on `case` in its own worker, untimed,
        the candidate's processes frozen while it compiles from caches they can write
        (triton_cache.py)."""
        if self.apart is None:
            return
        sets = [inputs_for(self.task, case, s, self.clock.device.torch_device, True) for s in seeds(2)]
        with self.clock.candidate_frozen():
            self.apart.first_calls(case, sets, reference_like, scalars, dims, int(SPIN_US * self.clock.cycles), warm)

    def _bound_notes(self, name: str, series: _Series) -> list[str]:
        """The time stage's log lines on the bound's figures over the series scored."""
        tally, b, calls = series.tally, series.b, series.calls
        notes = [
            f"the judge's clock beyond the samples' claim: {statistics.fmean(series.excess) / b:+.3f} us a call "
            f"(sd {_sd(series.excess) / b:.3f} over {len(series.excess)} chunk(s)); the bound's slack "
            f"{bound_slack(series.claimed, series.empty, calls, len(tally.spans)) / calls:.3f} us a call",
            self._paired(name, tally, b, series.excess),
        ]
        if self.apart is not None:
            notes.append(
                f"the baseline timed in a worker of its own (settings.baseline_worker; the judge's figures above are "
                f"that worker's): switches {self.apart_switch_us:.0f} us a chunk"
            )
        return notes + _second_side_note(tally.ratios)

    def _series(self, name: str, tally: _Tally, b: int) -> _Series:
        """A series of case `name`'s timed chunks of `b` calls (_chunks_that_queue) and its figures."""
        calls = b * len(tally.spans)
        empty = calls * (self.empty_us[name] + tally.spin_us)
        judged = sum(tally.spans) - empty - len(tally.spans) * self.switch_us
        claims = chunk_claims(tally.baseline, tally.candidate, b)
        excess = chunk_excess(tally.spans, b, empty / calls, claims, self.switch_us)
        return _Series(tally, b, empty, judged, sum(claims), excess)

    def _foul(self, name: str, series: _Series) -> str:
        """Why a series is the candidate's foul ("" for none): GPU work beside the copies of its
        sets, or samples that do not explain the judge's clock (the bound)."""
        crowded = crowded_copies(series.tally.copies_us)
        if crowded:
            return crowded
        calls, chunks = series.calls, len(series.tally.spans)
        if not exceeds_bound(series.judged, series.claimed, series.empty, calls, chunks):
            return ""
        by_chunk = ", ".join(f"{e / series.b:+.1f}" for e in series.excess[:12])
        own = self._baseline_excess(name, series.tally, series.b)
        return (
            f"the candidate's timings claim {series.claimed / calls:.2f} us a call but the judge's clock saw "
            f"{series.judged / calls:.2f} us of its work a call (beyond the claim, chunk by chunk: {by_chunk} us a "
            f"call; the baseline's own clock beyond its samples {statistics.fmean(own) / series.b:+.1f} us a call): "
            "its samples were changed or its work was done outside its timed calls"
        )

    def _chunks_that_queue(
        self,
        case: Case,
        reference_like: Sequence[torch.Tensor],
        lent_args: tuple[Kernel, dict, dict, int, float, bool],  # type: ignore[type-arg]
        seeds: Seeds,
        tolerances: Sequence[Tolerance],
        trials: int,
        n: int,
        b: int,
    ) -> tuple[_Tally, int]:
        """The case's timed chunks of `b` calls each, `trials` x n calls in all; where the worker's
        host is held by the GPU while it queues a chunk, again with half as many calls a chunk
        (down to _MIN_CHUNK_CALLS): (the tally, the calls a chunk)."""
        cut: list[str] = []  # why the chunks have fewer calls than first sized
        while True:
            try:
                layout = Layout.of(reference_like, b)
                _, scalars, dims, spin, queue_us, warm = lent_args
                with (
                    Lent(self.clock, case, layout, *lent_args) as lent,
                    self._apart_lent(case, layout, spin, scalars, dims, warm, queue_us) as other,
                ):
                    lent.apart = other
                    tally = self._chunks(lent, case, seeds, trials * -(-n // b), tolerances)
                tally.log += cut
                return tally, b
            except QueueBlocked as blocked:
                # A stream's queue behind `go` holds a few hundred to a thousand launches (CUDA,
                # HIP): a call of many launches gets fewer calls a chunk, not a verdict.
                if not blocked.on_gpu or b <= _MIN_CHUNK_CALLS:
                    raise
                b = max(_MIN_CHUNK_CALLS, b // 2)
                cut.append(f"{blocked}; {b} calls a chunk instead")

    def _chunks(self, lent: Lent, case: Case, seeds: Seeds, count: int, tolerances: Sequence[Tolerance]) -> _Tally:
        """`count` timed chunks of the case, every call's outputs compared with the baseline's."""
        offsets = side_offsets(self.launch_us[case.name], self.stream_us[case.name])
        tally = _Tally()
        began = time.perf_counter()
        twin = twin_calls(seeds(1)[0], count, lent.layout.count)
        for index in range(count):
            # Every other chunk the candidate goes first (A B, B A, ...): whatever the side timed
            # second inherits from the first (clocks, caches, the other context's state) falls on
            # each side alike.
            drawn = seeds(lent.layout.count)
            if twin is not None and index == twin[0]:
                drawn[twin[2]] = drawn[twin[1]]
            base_span, base_times, span, cand_times, errors = timed_chunks(lent, index, drawn, self.reset_l2, tally.log)
            if errors:
                raise Verdict("INCORRECT", f"timed call failed: candidate: {errors[0]}")
            bad = lent.bad_calls(tolerances)
            if bad:
                raise Verdict(
                    "INCORRECT", f"{bad} timed call(s) of the candidate returned outputs that differ from the reference"
                )
            if twin is not None and index == twin[0] and not lent.same_bits(twin[1], twin[2]):
                raise Verdict(
                    "INCORRECT",
                    "not deterministic: two timed calls on the same inputs returned outputs that differ bitwise",
                )
            tally.baseline += [max(t - offsets["judge"], _MIN_CALL_US) for t in base_times]
            tally.candidate += [max(t - offsets["worker"], _MIN_CALL_US) for t in cand_times]
            tally.spans.append(span)
            tally.baseline_spans.append(base_span)
            tally.ratios.append(interquartile_mean(base_times) / max(interquartile_mean(cand_times), _MIN_CALL_US))
            width = ratio_width(tally.ratios)
            if len(tally.ratios) < count and width is not None and width <= _STOP_WIDTH:
                tally.log.append(
                    f"stopped after {len(tally.ratios)} of {count} chunks: the speedup's interval over them "
                    f"+-{100 * width:.2f}%"
                )
                break
        phases = ", ".join(f"{name} {seconds:.2f}" for name, seconds in lent.phases.items())
        tally.log.append(f"{time.perf_counter() - began:.2f} s in chunks ({phases})")
        if any(side["aimed"] for side in lent.landing.values()):
            tally.log.append(
                "calls whose large outputs started where placement aimed them: "
                + ", ".join(f"{name} {side['landed']} of {side['aimed']}" for name, side in lent.landing.items())
            )
        if lent.pool_scatter is not None and self.clock.same_places:
            tally.log.append(f"the worker's lent pool: {lent.pool_scatter.note}")
        tally.spin_us = statistics.fmean(lent.spins_us) if lent.spins_us else 0.0
        tally.late, tally.lead_ms, tally.copies_us = lent.late_chunks, lent.lead_ms, lent.copies_us
        return tally

    def _baseline_excess(self, name: str, tally: _Tally, b: int) -> list[float]:
        """Per chunk, us: the judge's clock around its baseline calls beyond the baseline's own
        samples, every call of the chunk (chunk_excess with the judge's empty procedure and no switches)."""
        own = [sum(tally.baseline[i : i + b]) for i in range(0, len(tally.baseline), b)]
        switches = self.apart_switch_us if self.apart is not None else 0.0  # its span is clocked as the worker's
        return chunk_excess(tally.baseline_spans, b, self.judge_empty_us[name] + tally.spin_us, own, switches)

    def _paired(self, name: str, tally: _Tally, b: int, excess: list[float]) -> str:
        """The time stage's log line for bound.paired_excess: the candidate's chunk excess
        (`excess`, as the bound's log reads it), less the baseline's over the judge's own samples."""
        own = self._baseline_excess(name, tally, b)
        paired = paired_excess(excess, own)
        return (
            f"paired with the baseline: the judge's clock beyond the baseline's own samples "
            f"{statistics.fmean(own) / b:+.3f} us a call (empty procedure {self.judge_empty_us[name]:.2f} us a call "
            f"in the judge, {self.empty_us[name]:.2f} us through the worker); the candidate's beyond its claim, "
            f"less that: {statistics.fmean(paired) / b:+.3f} us a call (sd {_sd(paired) / b:.3f})"
        )

    def _describe(
        self,
        case: Case,
        reference_like: Sequence[torch.Tensor],
        warm: bool,
        tally: _Tally,
        b: int,
        judged_us: float,
        claimed_us: float,
        hosts: list[float],
    ) -> str:
        """The time stage's log line for a case: what the chunk clock saw and what it took off."""
        name = case.name
        launch, stream, seconds = self.launch_us[name], self.stream_us[name], self.stream_side_us[name]
        offsets = side_offsets(launch, stream)
        judge_pair, worker_pair = self.judge_pair_us[name], self.worker_pair_us[name]
        in_out = (self.input_bytes[name] + sum(t.nbytes for t in reference_like)) / 2**20
        spin = int(SPIN_US * self.clock.cycles)
        return (
            f"inputs {'warm' if warm else 'cold'}, {self.clock.scatter.note} ({in_out:.2f} MiB a call in and out, "
            f"warm up to {self.warm_bytes / 2**20:.2f} MiB); chunk clock: {len(tally.spans)} chunk(s) of {b} calls; "
            f"the judge saw {judged_us:.2f} us a call, the samples as scored {claimed_us:.2f} us (empty procedure "
            f"{self.empty_us[name]:.2f} us + spin {tally.spin_us:.2f} us a call ({spin / self.clock.cycles:.2f} by the "
            f"calibration), switches {self.switch_us:.0f} us a chunk; empty event pair {judge_pair:.2f} us in the "
            f"judge, {worker_pair:.2f} us in the worker); one empty "
            f"kernel {launch['judge']:.3f} us in the judge, {launch['worker']:.3f} us in the worker, a second "
            f"{stream:.3f} us ({seconds['judge']:.3f} and {seconds['worker']:.3f}): {offsets['judge']:.3f} and "
            f"{offsets['worker']:.3f} us taken off their samples; the "
            f"judge's chunks queued behind a {tally.lead_ms:.1f} ms lead, {tally.late} reached early and timed again; "
            f"a call's host cost {hosts[0]:.1f} us in the judge, {hosts[1]:.1f} us in the worker; the sets copied "
            f"in {_median(tally.copies_us.get('judge')):.0f} us a chunk for the judge, "
            f"{_median(tally.copies_us.get('worker')):.0f} us into the worker's lent pool just before `go`"
        )


def _median(values: Sequence[float] | None) -> float:
    return statistics.median(values) if values else 0.0


def _empty_count(reference_like: Sequence[torch.Tensor]) -> int:
    """Calls in a case's empty chunk: EMPTY_CALLS, fewer where three copies of its outputs would
    pass CHUNK_BYTES."""
    return max(2, min(EMPTY_CALLS, CHUNK_BYTES // max(1, 3 * sum(t.nbytes for t in reference_like))))


def _by_launches(times: Sequence[float], width: int) -> list[float]:
    """The interquartile mean of the empty calls with each of a cycle's `width` kernel counts."""
    return [interquartile_mean(times[i::width]) for i in range(width)]


def twin_calls(seed: int, chunks: int, calls: int) -> tuple[int, int, int] | None:
    """(chunk, first, second): in which of a case's first chunks, chosen by a secret `seed`, the
    call `second` is given the very set of call `first`, both chosen too; the two must return the
    same bits (the checked calls' determinism rule, applied where the candidate is timed and cannot
    tell which chunk or calls). Within the first _STOP_CHUNKS, which every case runs; None where a
    chunk has a single call."""
    if calls < 2 or chunks < 1:
        return None
    pick = random.Random(seed)
    chunk = pick.randrange(min(chunks, _STOP_CHUNKS))
    first, second = pick.sample(range(calls), 2)
    return chunk, first, second


def first_side(chunk: int) -> str:
    """Which side a chunk times first: the baseline in even chunks, the candidate in odd ones."""
    return "baseline" if chunk % 2 == 0 else "candidate"


def second_side_gain(ratios: Sequence[float]) -> tuple[float, float, float] | None:
    """How much faster a side reads when timed second in a chunk, from per-chunk speedups in the
    order timed (first_side: the baseline leads even chunks): (the gain, the mean speedup of the
    chunks the baseline led, of those the candidate led). A chunk the baseline leads reads the
    speedup high by the gain, one the candidate leads low by as much; alternation cancels it in
    the mean, not in the spread. Over session 45's 41 no-op cases replayed it read -2.7% to
    +2.7%, within the chunks' own spread: no task there had one. None without chunks of both
    kinds."""
    led = [[r for i, r in enumerate(ratios) if first_side(i) == side] for side in ("baseline", "candidate")]
    if not led[0] or not led[1] or min(min(led[0]), min(led[1])) <= 0:
        return None
    baseline_led, candidate_led = statistics.fmean(led[0]), statistics.fmean(led[1])
    return math.sqrt(baseline_led / candidate_led) - 1.0, baseline_led, candidate_led


def _second_side_note(ratios: Sequence[float]) -> list[str]:
    """The time stage's log line for second_side_gain (none without chunks of both kinds)."""
    gain = second_side_gain(ratios)
    if gain is None:
        return []
    return [
        f"the side timed second read {100 * gain[0]:+.2f}% faster (the speedup {gain[1]:.4f} over the "
        f"chunks the baseline led, {gain[2]:.4f} over those the candidate led)"
    ]


def ratio_width(ratios: Sequence[float]) -> float | None:
    """The 95% interval's half-width of the mean of per-chunk speedups, relative to that mean, once
    there are enough chunks to stop on (an even count, at least _STOP_CHUNKS: as many chunks of
    each side first); None before."""
    k = len(ratios)
    if k < _STOP_CHUNKS or k % 2:
        return None
    mean = statistics.fmean(ratios)
    if mean <= 0:
        return None
    t = t975(k - 1)
    return t * statistics.stdev(ratios) / math.sqrt(k) / mean


def crowded_copies(copies_us: dict[str, list[float]]) -> str:
    """Why the copies of the worker's sets, queued on the judge's stream just before `go`, ran
    slower than the judge's copies of the same bytes (per chunk, us), or "": the candidate's GPU
    work would have read its inputs as they landed, before the clock. The worker's median against
    the judge's fastest: the judge's own copies ran up to 3x slower than the worker's in some
    cases on the H200 (bench/results/2026-12-04.md), never the other way, and a slow reference
    would loosen the check."""
    judge, worker = copies_us.get("judge", []), copies_us.get("worker", [])
    if not judge or not worker:
        return ""
    mine, its = min(judge), statistics.median(worker)
    if its <= _COPY_SLOWER * mine + _COPY_US:
        return ""
    return (
        f"the copies of the candidate's inputs, just before its timed calls, took {its:.0f} us a chunk against "
        f"{mine:.0f} us for the same bytes in the judge: GPU work of the candidate's ran beside them"
    )


class ChunkSides(Protocol):
    """The steps of one chunk on each side, as timed_chunks orders them (lent.Lent)."""

    def stage(self, seeds: list[int]) -> None: ...
    def candidate_chunk(self) -> tuple[float, list[float], list[str]]: ...
    def baseline_chunk(self) -> tuple[float, list[float]]: ...


def timed_chunks(
    lent: ChunkSides, index: int, drawn: list[int], reset_l2: Callable[[], str], log: list[str]
) -> tuple[float, list[float], float, list[float], list[str]]:
    """Chunk `index` of a case: the sets of seeds `drawn` staged in the judge, then each side's
    timed calls on them, the side first_side(index) names first, reset_l2 called just before each
    side's chunk (a note it returns goes to `log`): (the baseline's span and times, the
    candidate's span, samples and errors)."""

    def reset() -> None:
        note = reset_l2()
        if note:
            log.append(note)

    def candidate() -> tuple[float, list[float], list[str]]:
        reset()
        return lent.candidate_chunk()

    lent.stage(drawn)
    if first_side(index) == "baseline":
        reset()
        base_span, base_times = lent.baseline_chunk()
        span, cand_times, errors = candidate()
    else:
        span, cand_times, errors = candidate()
        reset()
        base_span, base_times = lent.baseline_chunk()
    return base_span, base_times, span, cand_times, errors


def side_offsets(launch_us: dict[str, float], stream_us: float) -> dict[str, float]:
    """What each side takes off its samples: its own reading of one empty kernel between the
    events, less what a second empty kernel adds behind the first. A call of work t launching n
    kernels then reads n x (t + a launch in a stream), whatever its process adds to every launch."""
    return {side: max(0.0, one - stream_us) for side, one in launch_us.items()}


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0
