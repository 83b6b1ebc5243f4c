"""Timing one case across the process boundary: the baseline in the judge, the candidate in its
worker, every candidate call checked by the judge and its timings bounded by the judge's clock.

Per trial, per chunk of B calls (B as large as the memory budget allows, up to the trial's n):
1. freeze the worker; a probe kernel of the judge's must run at its calibrated speed (GPU work
   the candidate left running would share the GPU with the baseline);
2. draw B fresh input sets (new seeds; the worker draws the same sets in its own memory once it
   is thawed): every timed call of either side gets inputs no call has seen, so no stored answer
   can match, each set copied to a random place of a pool of its side's (placement.py);
3. time the baseline on them in the judge (timing.run_calls, the chunk queued whole behind a
   spin as the worker's is behind `go`: _Lent.ahead), keeping each call's outputs as that set's
   reference (the baseline passed the check stage against the task's reference);
4. thaw the worker; the chunk clock: the judge spins its stream long enough for the worker to
   queue the whole chunk, records `start` and an interprocess `go`; the worker's stream waits on
   `go`, runs the same per-call procedure (its own event pair per call: the samples), copies
   each call's outputs into the judge's slots and records `done`; the judge's stream waits on
   `done` and records `end`;
5. the judge compares every slot, as its stream copied them right after `done` and before
   `end`, with its reference.
Every other chunk runs 4 before 3 (the worker drawing first): neither side is always timed second.
The worker's samples are its own: they can only flatter the candidate. The bound: the chunk's
span on the judge's clock, less the same procedure without calls (the empty chunk: run through
the worker, two context switches included, before the candidate was loaded, for every timed
case's layout), must be explained by the samples; a candidate whose samples claim less work than
the judge saw is CHEAT_DETECTED. How closely the chunk clock follows in-process events:
bench/results/2026-11-30.md, "Harness v2 on the H200" (bench/ipc_probe.py).
"""

from __future__ import annotations

import collections
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import torch

from arena.harness.candidate_worker import CandidateWorker
from arena.harness.check import mismatch_mask, split_outputs
from arena.harness.device import disable_persisting_l2
from arena.harness.families import inputs_for
from arena.harness.flush import Flusher, warm_limit
from arena.harness.placement import Scatter
from arena.harness.shared_gpu import SharedBlock, SharedEvent, runtime, slot_places, typed_view
from arena.harness.timing import cycles_per_us, elapsed_us, empty_launches, interquartile_mean, run_calls
from arena.harness.verdict import Verdict
from arena.task.task import Tolerance

CHUNK_BYTES = 4 << 30  # per chunk: both sides' fresh input sets, the output slots and the references
# Calls per chunk at most: the whole chunk is queued behind `go`, and a stream's queue of pending
# launches is finite (docs/harness.md, "Why each constant").
CHUNK_CALLS = 48
# Fresh input bytes per side per timed case at most: large inputs get fewer calls (at least
# _MIN_CALLS a trial), not seconds of drawing (docs/harness.md, "Why each constant").
FRESH_BYTES = 16 << 30
_WARMUP_S = 0.05
_MIN_CALLS, _MAX_CALLS = 10, 1000
_MIN_CALL_US = 0.1
_QUEUE_SPIN_MS = (5.0, 2000.0)  # the judge's wait for the worker to queue a chunk: floor, ceiling
# The probe must outlast a time slice between contexts, or it never sees the other context's
# queued work (docs/harness.md, "Why each constant").
_PROBE_MS, _PROBE_SLOWER = 12.0, 1.3
# The bound: the samples may explain the judge's clock less this much (bound_slack; the clocks'
# differences: docs/harness.md, "Why each constant").
_BOUND_RATIO, _BOUND_CALL_US, _BOUND_EMPTY, _BOUND_US = 0.10, 0.3, 0.003, 20.0

_T = TypeVar("_T")
Seeds = Callable[[int], list[int]]  # seeds(count): seeds of fresh input sets
EMPTY_CALLS = 64  # calls in the empty chunk measured for each timed case
# The spin ahead of each call's event pair, timed and empty alike, so that a pair is read behind a
# spin, not behind the flush; short, since every chunk is queued whole before the GPU reaches it
# (`go`, _Lent.ahead) and a longer spin's price entered the samples (docs/harness.md).
SPIN_US = 20.0
PAIR_ROUNDS = 3  # each side's readings (pair, launches): about this x EMPTY_CALLS calls each, 3+ chunks
LAUNCH_CYCLE = (0, 1, 2)  # empty kernels in the empty calls' pairs, interleaved call by call
# Calls in one chunk of those pairs at most: a stream's queue of launches behind `go` is finite
# (bench/results/2026-12-02.md, session 13).
PAIR_CHUNK_CALLS = 63


@dataclass(frozen=True)
class JudgedTiming:
    # Each side's samples less its own launch reading plus a launch in a stream (side_offsets);
    # the empty event pair enters only the bound.
    baseline_us: tuple[float, ...]
    candidate_us: tuple[float, ...]  # the worker's samples
    baseline_mean_us: float
    judged_us: float  # the candidate's time per call on the judge's clock
    chunks: int
    log: str


class Judge:
    """What the judge keeps across cases: its worker, the GPU runtime, events and calibrations."""

    def __init__(self, device: Any, worker: CandidateWorker, task: Any, warm_inputs: str = "small") -> None:
        self.device, self.worker, self.task = device, worker, task
        self.rt = runtime()
        self.go, self.done = SharedEvent.create(self.rt), SharedEvent.create(self.rt)
        self.flusher = Flusher(device)
        self.scatter = Scatter(device.torch_device)  # every timed call's inputs at a new place
        self.warm_bytes = warm_limit(device, warm_inputs)
        self.empty_phases: dict[str, str] = {}  # per timed case: what measure_empty spent, for the log
        self.input_bytes: dict[str, int] = {}  # per case: one call's input bytes
        self.cycles = cycles_per_us()
        self.probe_us = self._probe()  # before the candidate is loaded: the GPU is ours alone
        self.switch_us = 0.0
        self.empty_us: dict[str, float] = {}  # per timed case: the empty procedure's cost a call
        # Per timed case: each side's empty event pair, read in its own process by one procedure,
        # the timed calls' own with no call (measure_empty); the bound takes the lower off the
        # worker's samples (the score's samples lose each side's launch reading instead).
        self.worker_pair_us: dict[str, float] = {}
        self.judge_pair_us: dict[str, float] = {}
        # Per timed case: each side's timed procedure around one empty kernel (its pair and a
        # launch that follows the spin: what a call costs a side beyond its work, in that process),
        # and what a second empty kernel adds behind the first, both sides' mean (a launch in a
        # stream of calls). time_case takes the first off its side's samples and adds the second.
        self.launch_us: dict[str, dict[str, float]] = {}
        self.stream_us: dict[str, float] = {}
        self.l2_unavailable = ""  # why the persisting-L2 reset failed, once it has (reset_l2)

    def reset_l2(self) -> str:
        """Persisting L2 limited to 0 and its lines dropped, before every timed chunk (cheat 18,
        docs/harness.md); CUDA only, ROCm has none. '' or, the first time only, why it could not:
        a note for the time stage's log (later chunks skip a reset that cannot run)."""
        if self.device.backend != "cuda" or self.l2_unavailable:
            return ""
        self.l2_unavailable = disable_persisting_l2()
        return self.l2_unavailable

    def measure_empty(self, case: Any, reference_like: Sequence[torch.Tensor]) -> None:
        """Before the candidate is loaded (only harness code runs in the worker): the chunk clock
        around an empty chunk (two context switches) and around EMPTY_CALLS empty calls of `case`
        (each: flush, event pair, outputs handed over) through the worker; then each side's empty
        event pair, the same empty calls with a spin ahead of each pair, and each side's launch
        readings: the same with one and with two empty kernels between the events. No inputs: no
        call."""
        began = time.perf_counter()
        if not self.switch_us:
            with _Lent(self, case, _Layout.of([], 1), None, {}, {}, 0) as lent:
                self.switch_us = statistics.median(lent.clocked(0, calls=False)[0] for _ in range(5))
        count = max(2, min(EMPTY_CALLS, CHUNK_BYTES // max(1, 3 * sum(t.nbytes for t in reference_like))))
        warm = self.warm(case, reference_like)  # the empty calls touch one drawn set, when warm
        with _Lent(self, case, _Layout.of(reference_like, count), None, {}, {}, 0, warm=warm) as lent:
            clocked = [lent.clocked(count, calls=False) for _ in range(3)]
        self.empty_us[case.name] = max(0.0, statistics.median(span for span, _ in clocked) - self.switch_us) / count
        spans_done = time.perf_counter()
        # The pairs: the same empty calls with a spin ahead of each pair, on each side in turn, with
        # no, one and two empty kernels between the events, interleaved (LAUNCH_CYCLE) in chunks of
        # up to PAIR_CHUNK_CALLS (call k hands over in slot k % count), about PAIR_ROUNDS x count
        # calls a reading: a chunk costs the same whatever its calls, so fewer chunks a side
        # (bench/results/2026-12-02.md, session 13).
        spin = int(SPIN_US * self.cycles)
        width = len(LAUNCH_CYCLE)
        calls = width * min(count, PAIR_CHUNK_CALLS // width)
        rounds = max(PAIR_ROUNDS, round(PAIR_ROUNDS * count / (calls // width)))
        with _Lent(self, case, _Layout.of(reference_like, count), None, {}, {}, spin, warm=warm) as lent:
            worker = [
                float(t)
                for _ in range(rounds)
                for t in lent.clocked(calls, calls=False, launches=LAUNCH_CYCLE)[1].get("times_us", [])
            ]
            if len(worker) != rounds * calls or not all(math.isfinite(t) and t >= 0 for t in worker):
                raise Verdict("RUNTIME_ERROR", "the worker's empty chunk did not return one time per empty call")
            judge = lent.empty_pairs(calls, rounds, LAUNCH_CYCLE)
        readings = {side: _by_launches(times) for side, times in (("judge", judge), ("worker", worker))}
        self.worker_pair_us[case.name], self.judge_pair_us[case.name] = readings["worker"][0], readings["judge"][0]
        self.launch_us[case.name] = {side: values[1] for side, values in readings.items()}
        self.stream_us[case.name] = statistics.fmean(values[2] - values[1] for values in readings.values())
        self.empty_phases[case.name] = (
            f"{count} calls a chunk; switches and empty chunks {spans_done - began:.2f} s, "
            f"pairs and launches {time.perf_counter() - spans_done:.2f} s in {rounds} chunks of {calls} a side"
        )

    def warm(self, case: Any, reference_like: Sequence[torch.Tensor]) -> bool:
        """Whether `case`'s calls get their inputs read back after the flush (flush.warm_limit)."""
        if case.name not in self.input_bytes:
            sample = inputs_for(self.task, case, 0, self.device.torch_device, fresh=True)
            self.input_bytes[case.name] = sum(t.nbytes for t in sample)
            del sample
        return self.input_bytes[case.name] + sum(t.nbytes for t in reference_like) <= self.warm_bytes

    def spin_cost(self, spin: int, count: int = 8) -> float:
        """What one spin of `spin` cycles adds to a chunk on the GPU now, as one kernel among
        others on a stream (its own dispatch included): the empty chunk is measured without a
        spin, and a spin priced from the start's calibration gave a false CHEAT_DETECTED
        (bench/results/2026-11-30.md, session 7)."""
        if not spin:
            return 0.0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            torch.cuda._sleep(spin)
        end.record()
        torch.cuda.synchronize()
        return elapsed_us(start, end) / count

    def _probe(self) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            torch.cuda._sleep(int(_PROBE_MS * 100 * self.cycles))
        end.record()
        torch.cuda.synchronize()
        return elapsed_us(start, end)

    def quiet(self) -> None:
        """With the worker frozen, the judge's probe runs at its calibrated speed, or the candidate
        left GPU work running that would share the GPU with the baseline."""
        for _ in range(3):
            seen = self._probe()
            if seen <= _PROBE_SLOWER * self.probe_us:
                return
            time.sleep(0.05)
        raise Verdict(
            "CHEAT_DETECTED",
            f"the candidate's GPU work kept running while its processes were frozen (the judge's "
            f"probe took {seen:.0f} us, {self.probe_us:.0f} us on an idle GPU): the baseline would "
            "have been timed on a shared GPU",
        )

    def time_case(
        self,
        baseline: Any,
        case: Any,
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
        bound still reads the samples less the empty pair (the lower of the two sides'), which
        its empty procedure is measured against."""
        judge_pair_us, worker_pair_us = self.judge_pair_us[case.name], self.worker_pair_us[case.name]
        pair_us = min(judge_pair_us, worker_pair_us)
        launch, stream = self.launch_us[case.name], self.stream_us[case.name]
        offsets = side_offsets(launch, stream)
        warm = self.warm(case, reference_like)
        in_bytes = self.input_bytes[case.name]
        out_bytes = sum(t.nbytes for t in reference_like)
        # Both sides' sets; slots, references, snapshot; the outputs each side holds (placement.Held).
        per_call = max(1, 2 * in_bytes + 4 * out_bytes)
        b_warm = max(2, min(32, CHUNK_BYTES // per_call))
        with _Lent(self, case, _Layout.of(reference_like, b_warm), baseline, scalars, dims, 0, warm=warm) as lent:
            walls, hosts = lent.warm_up(seeds)
        spin = int(SPIN_US * self.cycles)
        by_time = int(budget_s / (2 * trials * max(walls)))
        n = max(_MIN_CALLS, min(_MAX_CALLS, by_time, FRESH_BYTES // (trials * max(1, in_bytes))))
        b = max(1, min(n, CHUNK_CALLS, CHUNK_BYTES // per_call))
        chunks_per_trial = -(-n // b)
        samples: dict[str, list[float]] = {"baseline": [], "candidate": []}
        spans, claimed_net = [], []
        log: list[str] = []
        layout = _Layout.of(reference_like, b)
        with _Lent(self, case, layout, baseline, scalars, dims, spin, queue_us=walls[1] * 1e6, warm=warm) as lent:
            began = time.perf_counter()
            for index in range(trials * chunks_per_trial):
                # Every other chunk the candidate goes first (A B, B A, ...): whatever the side
                # timed second inherits from the first (clocks, caches, the other context's
                # state) falls on each side alike.
                drawn = seeds(layout.count)
                base_times, span, cand_times, errors = timed_chunks(lent, index, drawn, self.reset_l2, log)
                if errors:
                    raise Verdict("INCORRECT", f"timed call failed: candidate: {errors[0]}")
                bad = lent.bad_calls(tolerances)
                if bad:
                    raise Verdict(
                        "INCORRECT",
                        f"{bad} timed call(s) of the candidate returned outputs that differ from the reference",
                    )
                samples["baseline"] += [max(t - offsets["judge"], _MIN_CALL_US) for t in base_times]
                samples["candidate"] += [max(t - offsets["worker"], _MIN_CALL_US) for t in cand_times]
                spans.append(span)
                claimed_net.append(_claimed(cand_times, pair_us))
            phases = ", ".join(f"{name} {seconds:.2f}" for name, seconds in lent.phases.items())
            log.append(f"{time.perf_counter() - began:.2f} s in chunks ({phases})")
            spin_us = statistics.fmean(lent.spins_us) if lent.spins_us else 0.0
            late, lead_ms = lent.late_chunks, lent.lead_ms
        calls = b * len(spans)
        empty = calls * (self.empty_us[case.name] + spin_us)
        judged = sum(spans) - empty - len(spans) * self.switch_us
        claimed = sum(claimed_net)
        log.append(
            f"inputs {'warm' if warm else 'cold'}, {self.scatter.note} "
            f"({(in_bytes + out_bytes) / 2**20:.2f} MiB a call in and out, "
            f"warm up to {self.warm_bytes / 2**20:.2f} MiB); "
            f"chunk clock: {len(spans)} chunk(s) of {b} calls; the judge saw {judged / calls:.2f} us a call, "
            f"the worker's samples {claimed / calls:.2f} us (empty procedure {self.empty_us[case.name]:.2f} us "
            f"+ spin {spin_us:.2f} us a call ({spin / self.cycles:.2f} by the calibration), switches "
            f"{self.switch_us:.0f} us a chunk; empty event "
            f"pair {judge_pair_us:.2f} us in the judge, {worker_pair_us:.2f} us in the worker, {pair_us:.2f} "
            f"for the bound); one empty kernel {launch['judge']:.3f} us in the judge, {launch['worker']:.3f} us "
            f"in the worker, a second {stream:.3f} us: {offsets['judge']:.3f} and {offsets['worker']:.3f} us "
            f"taken off their samples; the judge's "
            f"chunks queued behind a {lead_ms:.1f} ms lead, {late} reached early and timed again; a call's "
            f"host cost {hosts[0]:.1f} us in the judge, {hosts[1]:.1f} us in the worker"
        )
        if exceeds_bound(judged, claimed, empty, calls, len(spans)):
            raise Verdict(
                "CHEAT_DETECTED",
                f"the candidate's timings claim {claimed / calls:.2f} us a call but the judge's clock saw "
                f"{judged / calls:.2f} us of its work a call: its samples were changed or its work was "
                "done outside its timed calls",
            )
        return JudgedTiming(
            baseline_us=tuple(samples["baseline"]),
            candidate_us=tuple(samples["candidate"]),
            baseline_mean_us=statistics.fmean(samples["baseline"]),
            judged_us=max(judged / calls, _MIN_CALL_US),
            chunks=len(spans),
            log="\n".join(log),
        )


def _by_launches(times: Sequence[float]) -> list[float]:
    """The interquartile mean of the empty calls with each count of LAUNCH_CYCLE's kernels."""
    width = len(LAUNCH_CYCLE)
    return [interquartile_mean(times[i::width]) for i in range(width)]


def first_side(chunk: int) -> str:
    """Which side a chunk times first: the baseline in even chunks, the candidate in odd ones."""
    return "baseline" if chunk % 2 == 0 else "candidate"


def bound_slack(claimed: float, empty: float, calls: int, spans: int) -> float:
    """How far the judge's clock may exceed the samples' claim, us: a share of the claim, of the
    empty procedure's time, a little a call and a little a chunk (the _BOUND_* constants)."""
    return _BOUND_RATIO * max(claimed, 0.0) + _BOUND_EMPTY * empty + _BOUND_CALL_US * calls + _BOUND_US * spans


def exceeds_bound(judged: float, claimed: float, empty: float, calls: int, spans: int) -> bool:
    """The bound (docs/harness.md): over a case's `spans` chunks of `calls` calls in all, the work
    the judge's clock saw (`judged`, us, the empty procedure's `empty` us and the switches already
    taken off) beyond what the worker's samples claim (`claimed`, _claimed) exceeds the slack:
    CHEAT_DETECTED."""
    return judged - claimed > bound_slack(claimed, empty, calls, spans)


def timed_chunks(
    lent: Any, index: int, drawn: list[int], reset_l2: Callable[[], str], log: list[str]
) -> tuple[list[float], float, list[float], list[str]]:
    """Chunk `index` of a case: each side's timed calls on the sets of seeds `drawn`, the side
    first_side(index) names first, reset_l2 called just before each side's chunk (a note it
    returns goes to `log`): (baseline times, span, candidate samples, candidate errors)."""

    def reset() -> None:
        note = reset_l2()
        if note:
            log.append(note)

    def candidate() -> tuple[float, list[float], list[str]]:
        lent.worker_draw(drawn)
        reset()
        return lent.candidate_chunk()  # type: ignore[no-any-return]

    if first_side(index) == "baseline":
        reset()
        base_times = lent.baseline_chunk(drawn)
        span, cand_times, errors = candidate()
    else:
        span, cand_times, errors = candidate()
        reset()
        base_times = lent.baseline_chunk(drawn)
    return base_times, span, cand_times, errors


def side_offsets(launch_us: dict[str, float], stream_us: float) -> dict[str, float]:
    """What each side takes off its samples: its own reading of one empty kernel between the
    events, less what a second empty kernel adds behind the first. A call of work t launching n
    kernels then reads n x (t + a launch in a stream), whatever its process adds to every launch."""
    return {side: max(0.0, one - stream_us) for side, one in launch_us.items()}


def _claimed(times: Sequence[float], event_overhead_us: float) -> float:
    """The work a chunk's samples account for, each sample capped at 1.5x the chunk's median: the
    score drops 1.5 x IQR outliers before it averages, so samples that keep the sum honest with many
    tiny ones and a few huge outliers must not satisfy the bound (honest outliers are few and small
    next to its slack)."""
    net = [t - event_overhead_us for t in times]
    cap = 1.5 * max(statistics.median(net), 0.0) if net else 0.0
    return sum(min(t, cap) for t in net)


@dataclass(frozen=True)
class _Layout:
    """Where the output slots of B calls lie in the lent block."""

    outputs: list[list[dict[str, Any]]]  # per slot: (offset, dtype, shape, nbytes) of each output
    count: int

    @classmethod
    def of(cls, outputs: Sequence[torch.Tensor], count: int) -> _Layout:
        return cls(slot_places(outputs, count), count)

    def nbytes(self) -> int:
        return max([p["offset"] + p["nbytes"] for s in self.outputs for p in s] + [1])


def _stacked(
    data: torch.Tensor, places: list[list[dict[str, Any]]], index: int, first: int, count: int
) -> torch.Tensor:
    """Output `index` of slots first..first+count-1 as one (count, numel) view: every slot has the
    same layout, at a constant stride, and offsets are multiples of 256."""
    place = places[first][index]
    dtype = getattr(torch, place["dtype"])
    item = torch.empty((), dtype=dtype).element_size()
    stride = (places[1][index]["offset"] - places[0][index]["offset"]) if len(places) > 1 else place["nbytes"]
    typed = data[: data.numel() // item * item].view(dtype)
    return torch.as_strided(typed, (count, place["nbytes"] // item), (stride // item, 1), place["offset"] // item)


class _Lent:
    """The output slots lent to the worker for one case, and the steps of one chunk."""

    def __init__(
        self,
        judge: Judge,
        case: Any,
        layout: _Layout,
        baseline: Any,
        scalars: dict[str, Any],
        dims: dict[str, Any],
        spin: int,
        queue_us: float = 0.0,
        warm: bool = False,
    ) -> None:
        self.judge, self.case, self.layout, self.baseline, self.spin = judge, case, layout, baseline, spin
        self.warm = warm  # inputs read back into the cache before each call, on both sides
        self.scalars, self.dims = scalars, dims
        self.queue_us = queue_us  # the worker's host time a call, from the warm-up
        self.sets: list[list[torch.Tensor]] = []
        self.spins_us: list[float] = []  # per chunk: the spin's cost, with the worker frozen
        # The judge's own lead (ahead()), first sized as the worker's wait in clocked().
        self.lead_ms = max(_QUEUE_SPIN_MS[0], 1.5 * layout.count * queue_us / 1000 + 2)
        self.late_chunks = 0  # the judge's chunks whose GPU caught up with its host
        self.was_late = False  # the last of them
        self.waits_ms: dict[int, float] = {}  # clocked(): by a chunk's calls, the worker's wait that last sufficed
        self.phases: dict[str, float] = collections.defaultdict(float)

    def __enter__(self) -> _Lent:
        self.outputs = SharedBlock.allocate(self.judge.rt, self.layout.nbytes())
        # The references, and the snapshot of the slots taken inside the span: the judge's own
        # memory, laid out like the slots (never lent).
        self.reference_bytes = torch.empty(self.outputs.nbytes, dtype=torch.uint8, device=self.outputs.bytes.device)
        self.snapshot_bytes = torch.empty_like(self.reference_bytes)
        self.references = [[typed_view(self.reference_bytes, p) for p in s] for s in self.layout.outputs]
        self.judge.worker.request(
            "bind",
            {
                "case": self.case.name,
                "outputs": {
                    "handle": self.outputs.handle.hex(),
                    "nbytes": self.outputs.nbytes,
                    "slots": self.layout.outputs,
                },
                "go": self.judge.go.handle.hex(),
                "done": self.judge.done.handle.hex(),
                "spin_cycles": self.spin,
                "scalars": self.scalars,
                "dims": self.dims,
                "warm": self.warm,
            },
        )
        return self

    def __exit__(self, *exc: object) -> None:
        worker = self.judge.worker
        if worker.frozen:
            worker.thaw()
        try:
            worker.request("unbind")  # the worker lets go of the block before the judge frees it
        finally:
            torch.cuda.synchronize()
            self.outputs.close()

    def draw(self, seeds: list[int]) -> None:
        """The judge's own copies of the chunk's input sets (the worker draws its own: worker_draw)."""
        self.sets = []
        drawn = [inputs_for(self.judge.task, self.case, s, self.judge.device.torch_device, True) for s in seeds]
        self.sets = self.judge.scatter.place(drawn)
        del drawn
        torch.cuda.synchronize()  # drawn before anything is timed

    def empty_pairs(self, count: int, rounds: int, launches: Sequence[int] = (0,)) -> list[float]:
        """`rounds` of `count` empty calls of the judge's own, as the worker's empty chunk runs them
        (one drawn set touched when warm, harness outputs poisoned for HIP, call k's slots (k
        modulo the slots) written with zeros; launches[k % len] empty kernels between the events)
        with this lent's spin: the time of each empty call's event pair, us, in order."""
        slots = self.references[0]
        sets = [inputs_for(self.judge.task, self.case, 0, self.judge.device.torch_device, True) if self.warm else []]
        outputs = [torch.empty_like(t) for t in slots] if self.judge.task.category.is_hip else []
        blank = [torch.zeros_like(t) for t in slots]

        def after(k: int, j: int, result: object) -> None:
            for slot, zero in zip(self.references[k % len(self.references)], blank):
                slot.copy_(zero)

        pairs: list[tuple[Any, Any]] = []
        self.judge.worker.freeze()  # the GPU the judge's alone, as when the baseline is timed
        try:
            # A round the GPU reached before it was queued read the host-fed pair: done again,
            # behind a longer lead (the first round's lead is a guess), a few times at most.
            for attempt in range(rounds + 4):
                got = self.ahead(
                    lambda: run_calls(
                        empty_launches(launches),
                        list(range(count)),
                        sets * count,
                        None,
                        outputs,
                        after,
                        self.judge.flusher,
                        self.spin,
                        {},
                        {},
                        warm=self.warm,
                    )[0]
                )
                if not self.was_late or (not pairs and attempt == rounds + 3):
                    pairs += got
                if len(pairs) >= rounds * count:
                    break
        finally:
            self.judge.worker.thaw()
        times = [elapsed_us(start, end) for start, end in pairs]
        if not all(math.isfinite(t) and t >= 0 for t in times):
            raise Verdict("RUNTIME_ERROR", "the judge's empty calls did not time")
        return times

    def worker_draw(self, seeds: list[int]) -> None:
        began = time.perf_counter()
        self.judge.worker.request("draw", {"seeds": seeds})
        self.phases["draw"] += time.perf_counter() - began

    def warm_up(self, seeds: Seeds) -> tuple[list[float], list[float]]:
        """Both sides run the timed procedure (discarded), long enough to size n and the spin:
        (wall per call of each side, host us per invoke of each side), from the second of two
        rounds, since the first pays what a case pays once (bench/results/2026-11-30.md, session 6)."""
        count = self.layout.count
        worker = self.judge.worker
        for _ in range(2):
            drawn = seeds(count)
            self.draw(drawn)
            begin = time.perf_counter()
            _, base_host = self._baseline_calls(count, ahead=False)  # a wall with no lead in it
            torch.cuda.synchronize()
            base_wall = (time.perf_counter() - begin) / count
            self.worker_draw(drawn)
            begin = time.perf_counter()
            self.judge.go.record()
            worker.send("chunk", {"count": count})
            worker.receive()  # queued
            reply, _ = worker.receive()
            cand_wall = (time.perf_counter() - begin) / count
        cand_host = [float(h) for h in reply.get("host_us", [])][:count] or [0.0]
        return [base_wall, cand_wall], [statistics.median(base_host or [0.0]), min(statistics.median(cand_host), 1e5)]

    def _baseline_calls(self, count: int, ahead: bool = True) -> tuple[list[tuple[Any, Any]], list[float]]:
        outputs = [torch.empty_like(t) for t in self.references[0]] if self.baseline.harness_outputs else []

        def keep(k: int, j: int, result: object) -> None:
            got = outputs if self.baseline.harness_outputs else split_outputs(result, len(self.references[k]))
            if isinstance(got, str):
                raise RuntimeError(f"the baseline failed in a timed call: {got}")
            for ref, g in zip(self.references[k], got):
                ref.copy_(g)  # type: ignore[arg-type]

        def queue() -> tuple[list[tuple[Any, Any]], list[float]]:
            return run_calls(
                self.baseline,
                list(range(count)),
                self.sets,
                None,
                outputs,
                keep,
                self.judge.flusher,
                self.spin,
                self.scalars,
                self.dims,
                warm=self.warm,
            )

        return self.ahead(queue) if ahead else queue()

    def ahead(self, queue: Callable[[], _T]) -> _T:
        """`queue` (one chunk of the judge's calls) queued whole behind a spin, then run, as the
        worker's chunk waits behind `go`: the GPU then meets both sides' calls already queued, not
        fed call by call by the host (bench/results/2026-12-01.md, session 10). A chunk the GPU
        reached before its host had queued it is counted (late_chunks, and `was_late` says so of
        this one) and the next one waits twice as long."""
        head = torch.cuda.Event()
        torch.cuda._sleep(int(self.lead_ms * 1000 * self.judge.cycles))
        head.record()
        began = time.perf_counter()
        queued = queue()
        queued_ms = (time.perf_counter() - began) * 1000
        self.was_late = head.query() or queued_ms > 0.8 * self.lead_ms
        if self.was_late:
            self.late_chunks += 1
            self.lead_ms = min(_QUEUE_SPIN_MS[1], 2 * max(self.lead_ms, queued_ms))
        torch.cuda.synchronize()
        return queued

    def baseline_chunk(self, drawn: list[int]) -> list[float]:
        """The baseline's timed calls on the sets of seeds `drawn`, with the worker frozen."""
        worker = self.judge.worker
        began = time.perf_counter()
        worker.freeze()
        self.judge.quiet()
        self.spins_us.append(self.judge.spin_cost(self.spin))
        probed = time.perf_counter()
        self.draw(drawn)
        drew = time.perf_counter()
        pairs, _ = self._baseline_calls(self.layout.count)
        if self.was_late:  # timed while its host fed it: again, behind the longer lead (the same sets)
            pairs, _ = self._baseline_calls(self.layout.count)
        torch.cuda.synchronize()
        timed = time.perf_counter()
        worker.thaw()
        self.phases["freeze+probe"] += probed - began
        self.phases["draw"] += drew - probed
        self.phases["baseline"] += timed - drew
        return [elapsed_us(s, e) for s, e in pairs]

    def clocked(self, count: int, calls: bool = True, launches: Sequence[int] = (0,)) -> tuple[float, dict[str, Any]]:
        """The chunk clock around the worker's `count` calls (call k on set k), or its empty calls
        (`calls` False: call k with launches[k % len] empty kernels): (span us, reply). A chunk the
        worker took too long to queue is clocked again behind a longer wait, which this lent's
        later chunks of as many calls start from (empty calls have no warm-up to size it)."""
        worker = self.judge.worker
        wait_ms = min(_QUEUE_SPIN_MS[1], max(_QUEUE_SPIN_MS[0], 1.5 * count * self.queue_us / 1000 + 2))
        wait_ms = max(wait_ms, self.waits_ms.get(count, 0.0))
        while True:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(int(wait_ms * 1000 * self.judge.cycles))
            launched = time.perf_counter()
            start.record()
            self.judge.go.record()
            worker.send(
                "chunk",
                {
                    "count": count,
                    "calls": calls,
                    "launches": list(launches),
                    "poison": self.judge.task.category.is_hip,
                },
            )
            worker.receive()  # queued: every call is behind `go`
            queued_ms = (time.perf_counter() - launched) * 1000
            self.judge.done.wait()
            # The outputs judged are the ones in the slots now, before `end`: a worker that records
            # `done` ahead of its work (or not at all) leaves poison here, not a shorter span.
            self.snapshot_bytes.copy_(self.outputs.bytes)
            end.record()
            torch.cuda.synchronize()
            header, _ = worker.receive()
            if queued_ms < 0.8 * wait_ms:
                self.waits_ms[count] = wait_ms
                return elapsed_us(start, end), header
            if wait_ms >= _QUEUE_SPIN_MS[1]:  # the GPU may have idled inside the span: no bound
                raise Verdict(
                    "RUNTIME_ERROR",
                    f"the candidate's worker took {queued_ms:.0f} ms to queue {count} calls (the judge waits "
                    f"at most {_QUEUE_SPIN_MS[1]:.0f} ms)",
                )
            wait_ms = min(_QUEUE_SPIN_MS[1], 2 * max(wait_ms, queued_ms))

    def candidate_chunk(self) -> tuple[float, list[float], list[str]]:
        began = time.perf_counter()
        self.outputs.bytes.fill_(0xFF)  # poison every slot: NaN for floats, -1 for integers
        span, reply = self.clocked(self.layout.count)
        times = reply.get("times_us")
        if (
            not isinstance(times, list)
            or len(times) != self.layout.count
            or not all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in times)
        ):
            raise Verdict("CHEAT_DETECTED", "the worker's reply does not hold one finite sample per timed call")
        errors = [str(e)[:2000] for e in reply.get("errors", [])][:5] if isinstance(reply.get("errors"), list) else []
        self.phases["candidate"] += time.perf_counter() - began
        return span, [float(t) for t in times], errors

    def bad_calls(self, tolerances: Sequence[Tolerance]) -> int:
        """How many of the chunk's calls have an output off its reference (every slot compared, a
        group of slots at a time so the comparison's double copies stay near 1 GiB)."""
        began = time.perf_counter()
        places, count = self.layout.outputs, self.layout.count
        bad = torch.zeros(count, dtype=torch.bool, device=self.reference_bytes.device)
        for index, tol in enumerate(tolerances):
            group = max(1, (1 << 30) // max(1, places[0][index]["nbytes"] * 4))
            for first in range(0, count, group):
                n = min(group, count - first)
                got = _stacked(self.snapshot_bytes, places, index, first, n)
                want = _stacked(self.reference_bytes, places, index, first, n)
                bad[first : first + n] |= mismatch_mask(got, want, tol).any(dim=1)
        result = int(bad.sum())
        self.phases["validate"] += time.perf_counter() - began
        return result
