"""One case's lent block: the output slots the judge lends the worker for the case's timed
calls, and the steps of one chunk on each side (the baseline's in the judge, the candidate's in
its worker, behind `go`), with the judge's references and its snapshot of the slots
(docs/harness.md, "A timed chunk"). judged_timing.py orders the steps and judges the samples."""

from __future__ import annotations

import collections
import contextlib
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import torch

from arena.harness import guard
from arena.harness.backends.kernel import Kernel
from arena.harness.candidate_worker import CandidateFailed
from arena.harness.check import (
    changed_in_calls,
    changed_inputs,
    made_outputs,
    mismatch_mask,
    returned_outputs,
    same_bits,
    with_written,
)
from arena.harness.chunk_clock import ChunkClock
from arena.harness.families import inputs_for
from arena.harness.frames import WorkerError, WorkerGone
from arena.harness.placement import Scatter, landing, lent_pool_bytes, make_room, reserve
from arena.harness.shared_gpu import Place, SharedBlock, place_of, slot_places, typed_view
from arena.harness.timing import elapsed_us, empty_launches, run_calls
from arena.harness.verdict import Verdict
from arena.task.task import Case, Tolerance

_QUEUE_SPIN_MS = (5.0, 2000.0)  # the judge's wait for the worker to queue a chunk: floor, ceiling
_T = TypeVar("_T")
Seeds = Callable[[int], list[int]]  # seeds(count): seeds of fresh input sets
Pairs = tuple[torch.cuda.Event, torch.cuda.Event]  # a timed call's start and end events


class QueueBlocked(Verdict):
    """The worker could not queue a chunk before the GPU reached `go`. `on_gpu`: its host was held
    until then, twice, whatever the wait (its calls' launches filled the stream's queue of pending
    work, or a call synchronised); a chunk of fewer calls may fit (Judge.time_case)."""

    def __init__(self, message: str, on_gpu: bool) -> None:
        super().__init__("RUNTIME_ERROR", message)
        self.on_gpu = on_gpu


def queueing(queued_ms: float, wait_ms: float, held: int) -> tuple[str, int]:
    """How the worker's queueing of a chunk went behind a wait of `wait_ms`: "ok" (done well
    before the GPU reached `go`), "again" (try a longer wait), "held" (its host was let go just as
    the GPU reached `go`, twice in a row whatever the wait: it waited on the GPU), "slow" (too
    long at the longest wait); and the tries in a row held, `held` the count before this one."""
    if queued_ms < 0.8 * wait_ms:
        return "ok", 0
    held = held + 1 if queued_ms < 1.25 * wait_ms else 0
    if held >= 2:
        return "held", held
    return ("slow" if wait_ms >= _QUEUE_SPIN_MS[1] else "again"), held


def reported_landing(got: object, calls: int) -> dict[str, int]:
    """The worker's count of a chunk's calls whose large outputs were aimed and landed where
    aimed (placement.landing): its word, for the log only, so a count that is not an int of
    0..calls reads 0 rather than stopping the judge."""
    counts = got if isinstance(got, dict) else {}
    return {
        key: value if type(value) is int and 0 <= value <= calls else 0
        for key, value in ((key, counts.get(key)) for key in ("aimed", "landed"))
    }


@dataclass(frozen=True)
class Layout:
    """Where the output slots of B calls lie in the lent block."""

    outputs: list[list[Place]]  # per slot: where each output lies
    count: int

    @classmethod
    def of(cls, outputs: Sequence[torch.Tensor], count: int) -> Layout:
        return cls(slot_places(outputs, count), count)

    def nbytes(self) -> int:
        return max([p["offset"] + p["nbytes"] for s in self.outputs for p in s] + [1])


def stacked(data: torch.Tensor, places: list[list[Place]], index: int, first: int, count: int) -> torch.Tensor:
    """Output `index` of slots first..first+count-1 as one (count, numel) view: every slot has the
    same layout, at a constant stride, and offsets are multiples of 256."""
    place = places[first][index]
    dtype = getattr(torch, place["dtype"])
    item = torch.empty((), dtype=dtype).element_size()
    stride = (places[1][index]["offset"] - places[0][index]["offset"]) if len(places) > 1 else place["nbytes"]
    typed = data[: data.numel() // item * item].view(dtype)
    return torch.as_strided(typed, (count, place["nbytes"] // item), (stride // item, 1), place["offset"] // item)


class Lent:
    """The output slots lent to the worker for one case, and the steps of one chunk."""

    def __init__(
        self,
        clock: ChunkClock,
        case: Case,
        layout: Layout,
        baseline: Kernel | None,  # None: the empty procedure only (Judge.measure_empty)
        scalars: dict[str, Any],
        dims: dict[str, Any],
        spin: int,
        queue_us: float = 0.0,
        warm: bool = False,
    ) -> None:
        self.clock, self.case, self.layout, self.baseline, self.spin = clock, case, layout, baseline, spin
        self.warm = warm  # inputs read back into the cache before each call, on both sides
        self.scalars, self.dims = scalars, dims
        self.queue_us = queue_us  # the worker's host time a call, from the warm-up
        self.sets: list[list[torch.Tensor]] = []  # the judge's copies of the chunk's sets, placed
        self.staged: list[list[torch.Tensor]] = []  # the sets as drawn, untouched: the worker's come from them
        self.lent: list[list[torch.Tensor]] = []  # the staged sets' copies in the worker's lent pool
        self.pool: SharedBlock | None = None  # where the worker's sets are put, lent to it (made on first use)
        self.pool_scatter: Scatter | None = None
        # Per chunk, us: the judge's copies of its own sets, and the copies of the worker's sets
        # queued just before `go` (nothing else of the judge's runs on the GPU then).
        self.copies_us: dict[str, list[float]] = {"judge": [], "worker": []}
        self.spins_us: list[float] = []  # per chunk: the spin's cost, with the worker frozen
        # The judge's own lead (ahead()), first sized as the worker's wait in clocked().
        self.lead_ms = max(_QUEUE_SPIN_MS[0], 1.5 * layout.count * queue_us / 1000 + 2)
        self.late_chunks = 0  # the judge's chunks whose GPU caught up with its host
        self.was_late = False  # the last of them
        self.ahead_us = 0.0  # the last of them: its queued calls' span on the judge's clock
        self.waits_ms: dict[int, float] = {}  # clocked(): by a chunk's calls, the worker's wait that last sufficed
        self.phases: dict[str, float] = collections.defaultdict(float)
        # Calls whose large outputs were aimed (placement.reserve), and those that landed there.
        self.landing = {side: {"aimed": 0, "landed": 0} for side in ("judge", "worker")}
        # settings.baseline_worker: the baseline's own worker's lent block, laid out as this one,
        # which times the baseline in baseline_chunk (baseline_apart.py); None: the judge does.
        self.apart: Lent | None = None
        self.whose = "the candidate's worker"  # whose chunks this block clocks, for the messages

    def __enter__(self) -> Lent:
        self.outputs = SharedBlock.allocate(self.clock.rt, self.layout.nbytes())
        # The references, and the snapshot of the slots taken inside the span: the judge's own
        # memory, laid out like the slots (never lent).
        self.reference_bytes = torch.empty(self.outputs.nbytes, dtype=torch.uint8, device=self.outputs.bytes.device)
        self.snapshot_bytes = torch.empty_like(self.reference_bytes)
        self.references = [[typed_view(self.reference_bytes, p) for p in s] for s in self.layout.outputs]
        call_bytes = sum(t.nbytes for t in self.references[0]) if self.references else 0
        reserve(self.layout.count, call_bytes, self.clock.device.torch_device)  # the worker's bind does the same
        self.clock.worker.request(
            "bind",
            {
                "case": self.case.name,
                "outputs": {
                    "handle": self.outputs.handle.hex(),
                    "nbytes": self.outputs.nbytes,
                    "slots": self.layout.outputs,
                },
                "go": self.clock.go.handle.hex(),
                "done": self.clock.done.handle.hex(),
                "spin_cycles": self.spin,
                "scalars": self.scalars,
                "dims": self.dims,
                "warm": self.warm,
            },
        )
        return self

    def __exit__(self, *exc: object) -> None:
        worker = self.clock.worker
        if worker.frozen:
            worker.thaw()
        try:
            worker.request("unbind")  # the worker lets go of the block before the judge frees it
        finally:
            torch.cuda.synchronize()
            self.outputs.close()
            if self.pool is not None:
                self.pool.close()

    def stage(self, seeds: list[int]) -> None:
        """The chunk's input sets, drawn here for both sides: the judge's copies placed now, the
        worker's kept as drawn until lend_sets copies them into its lent pool just before `go`
        (nothing of the sets exists in the worker's process before then)."""
        began = time.perf_counter()
        self.sets, self.staged = [], []
        self.staged = [inputs_for(self.clock.task, self.case, s, self.clock.device.torch_device, True) for s in seeds]
        first, placed = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        first.record()
        self.sets = self.clock.scatter.place(self.staged)
        placed.record()
        torch.cuda.synchronize()  # drawn before anything is timed
        if self.sets and self.sets[0] and self.sets[0][0] is not self.staged[0][0]:  # copied, not left as drawn
            self.copies_us["judge"].append(elapsed_us(first, placed))
        self.phases["draw"] += time.perf_counter() - began

    def stage_given(self, sets: list[list[torch.Tensor]]) -> None:
        """A checked chunk's sets, as the judge drew them for the check stage (the member's inputs),
        lent to the worker just before `go` like a timed chunk's; the judge keeps them untouched."""
        self.sets, self.staged = [], sets

    def lend_sets(self) -> dict[str, Any]:
        """The staged sets copied into the worker's lent pool, queued on the judge's stream (the
        copies are GPU work of the judge's: no candidate code sees the values before they land):
        the chunk header's `inputs`, where the worker finds its pool and each set in it."""
        if self.pool is None:
            free, _ = torch.cuda.mem_get_info()
            self.pool = SharedBlock.allocate(self.clock.rt, lent_pool_bytes(len(self.staged), self.staged[0], free))
            self.pool_scatter = Scatter(self.clock.device.torch_device, pool=self.pool.bytes)
        assert self.pool_scatter is not None
        mirrored = self.clock.scatter.starts if self.clock.same_places else ()
        placed = self.lent = self.pool_scatter.place(self.staged, at=mirrored)
        base = self.pool.bytes.data_ptr()
        return {
            "handle": self.pool.handle.hex(),
            "nbytes": self.pool.nbytes,
            "sets": [[place_of(t, t.data_ptr() - base) for t in one] for one in placed],
        }

    def empty_pairs(self, count: int, rounds: int, launches: Sequence[int] = (0,)) -> list[float]:
        """`rounds` of `count` empty calls of the judge's own, as the worker's empty chunk runs them
        (one drawn set touched when warm, harness outputs poisoned for HIP, call k's slots (k
        modulo the slots) written with zeros; launches[k % len] empty kernels between the events)
        with this lent's spin: the time of each empty call's event pair, us, in order."""
        slots = self.references[0]
        sets = [inputs_for(self.clock.task, self.case, 0, self.clock.device.torch_device, True) if self.warm else []]
        outputs = [torch.empty_like(t) for t in slots] if self.clock.task.category.is_hip else []
        blank = [torch.zeros_like(t) for t in slots]

        def after(k: int, j: int, result: object) -> None:
            for slot, zero in zip(self.references[k % len(self.references)], blank):
                slot.copy_(zero)

        pairs: list[Pairs] = []
        self.clock.worker.freeze()  # the GPU the judge's alone, as when the baseline is timed
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
                        self.clock.flusher,
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
            self.clock.worker.thaw()
        times = [elapsed_us(start, end) for start, end in pairs]
        if not all(math.isfinite(t) and t >= 0 for t in times):
            raise Verdict("RUNTIME_ERROR", "the judge's empty calls did not time")
        return times

    def judge_reply(self, reply: dict[str, Any], where: str = "in a timed call") -> None:
        """After every chunk of the candidate's calls: the torch functions they ran, the torch modes
        they left active, and what the candidate left running, counted by the kernel (nothing may
        wait between chunks)."""
        forbidden = guard.forbidden_in(reply.get("ops"), self.clock.task.forbidden, where)
        if forbidden:
            raise Verdict("CHEAT_DETECTED", forbidden)
        if reply.get("modes"):
            raise Verdict("CHEAT_DETECTED", f"candidate: {str(reply['modes'])[:200]} ({where})")
        left = self.clock.worker.left_running()
        if left:
            raise Verdict("CHEAT_DETECTED", f"after a chunk ({where}): {left}")

    def warm_up(self, seeds: Seeds) -> tuple[list[float], list[float]]:
        """Both sides run the timed procedure (discarded), long enough to size n and the spin:
        (wall per call of each side, host us per invoke of each side), from the second of two
        rounds, since the first pays what a case pays once (bench/results/2026-11-30.md, session 6)."""
        count = self.layout.count
        worker = self.clock.worker
        for round_ in range(2):
            self.stage(seeds(count))
            inputs = self.lend_sets()
            torch.cuda.synchronize()
            # The first round's baseline calls compile it in the judge: the candidate frozen.
            with self.clock.candidate_frozen() if round_ == 0 else contextlib.nullcontext():
                begin = time.perf_counter()
                _, base_host = self._baseline_calls(count, ahead=False)  # a wall with no lead in it
                torch.cuda.synchronize()
                base_wall = (time.perf_counter() - begin) / count
            begin = time.perf_counter()
            self.clock.go.record()
            worker.send("chunk", {"count": count, "inputs": inputs})
            worker.receive()  # queued
            reply, _ = worker.receive()
            cand_wall = (time.perf_counter() - begin) / count
            self.judge_reply(reply)
        cand_host = [float(h) for h in reply.get("host_us", [])][:count] or [0.0]
        return [base_wall, cand_wall], [statistics.median(base_host or [0.0]), min(statistics.median(cand_host), 1e5)]

    def _baseline_calls(self, count: int, ahead: bool = True) -> tuple[list[Pairs], list[float]]:
        if self.baseline is None:
            raise RuntimeError("no baseline was lent for this case's timed calls")
        baseline: Kernel = self.baseline
        made = made_outputs(self.clock.task)
        outputs = [torch.empty_like(self.references[0][i]) for i in made] if baseline.harness_outputs else []

        def keep(k: int, j: int, result: object) -> None:
            got = outputs if baseline.harness_outputs else returned_outputs(self.clock.task, result)
            if isinstance(got, str):
                raise RuntimeError(f"the baseline failed in a timed call: {got}")
            for ref, g in zip(self.references[k], with_written(self.clock.task, got, self.sets[j])):
                ref.copy_(g)  # type: ignore[arg-type]

        def queue() -> tuple[list[Pairs], list[float]]:
            before = dict(landing)
            try:
                return run_calls(
                    baseline,
                    list(range(count)),
                    self.sets,
                    None,
                    outputs,
                    keep,
                    self.clock.flusher,
                    self.spin,
                    self.scalars,
                    self.dims,
                    warm=self.warm,
                )
            finally:
                for key in landing:
                    self.landing["judge"][key] += landing[key] - before[key]

        return self.ahead(queue) if ahead else queue()

    def ahead(self, queue: Callable[[], _T]) -> _T:
        """`queue` (one chunk of the judge's calls) queued whole behind a spin, then run, as the
        worker's chunk waits behind `go`: the GPU then meets both sides' calls already queued, not
        fed call by call by the host (bench/results/2026-12-01.md, session 10). A chunk the GPU
        reached before its host had queued it is counted (late_chunks, and `was_late` says so of
        this one) and the next one waits twice as long."""
        head, tail = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        plugs = make_room(self.clock.device.torch_device)  # as the worker does before `go`: held to the chunk's end
        torch.cuda._sleep(int(self.lead_ms * 1000 * self.clock.cycles))
        head.record()
        began = time.perf_counter()
        queued = queue()
        tail.record()
        queued_ms = (time.perf_counter() - began) * 1000
        self.was_late = head.query() or queued_ms > 0.8 * self.lead_ms
        if self.was_late:
            self.late_chunks += 1
            self.lead_ms = min(_QUEUE_SPIN_MS[1], 2 * max(self.lead_ms, queued_ms))
        torch.cuda.synchronize()
        del plugs
        self.ahead_us = elapsed_us(head, tail)
        return queued

    def baseline_chunk(self) -> tuple[float, list[float]]:
        """The baseline's timed calls on the staged sets, with the worker frozen: (the span of its
        calls on the judge's clock, us; each call's time, us)."""
        worker = self.clock.worker
        began = time.perf_counter()
        worker.freeze()
        self.clock.quiet()
        self.spins_us.append(self.clock.spin_cost(self.spin))
        probed = time.perf_counter()
        if self.apart is not None:
            span, times = self._apart_chunk(self.apart)
        else:
            pairs, _ = self._baseline_calls(self.layout.count)
            if self.was_late:  # timed while its host fed it: again, behind the longer lead (the same sets)
                pairs, _ = self._baseline_calls(self.layout.count)
            torch.cuda.synchronize()
            span, times = self.ahead_us, [elapsed_us(s, e) for s, e in pairs]
        timed = time.perf_counter()
        worker.thaw()
        self.phases["freeze+probe"] += probed - began
        self.phases["baseline"] += timed - probed
        return span, times

    def _apart_chunk(self, apart: Lent) -> tuple[float, list[float]]:
        """The baseline's chunk in its own worker (settings.baseline_worker), on the same staged
        sets and through the candidate's procedure: its slots, as the judge snapshot them inside the
        span, are this chunk's references. (span us, each call's time us)."""
        apart.staged = self.staged
        apart.outputs.bytes.fill_(0xFF)
        try:
            span, reply = apart.clocked(self.layout.count)
        except (CandidateFailed, WorkerError, WorkerGone) as failure:  # never the candidate's worker's
            raise RuntimeError(f"the baseline's own worker failed in a timed chunk: {failure}") from None
        times = reply.get("times_us")
        errors = reply.get("errors")
        if isinstance(errors, list) and errors:
            raise RuntimeError(f"the baseline failed in a timed call in its own worker: {str(errors[0])[:2000]}")
        if not isinstance(times, list) or len(times) != self.layout.count:
            raise RuntimeError("the baseline's own worker did not return one time per timed call")
        self.reference_bytes.copy_(apart.snapshot_bytes)
        for key, value in reported_landing(reply.get("landing"), self.layout.count).items():
            self.landing["judge"][key] += value  # the baseline's side, wherever it runs
        return span, [float(t) for t in times]

    def clocked(
        self, count: int, calls: bool = True, launches: Sequence[int] = (0,), timed: bool = True
    ) -> tuple[float, dict[str, Any]]:
        """The chunk clock around the worker's `count` calls (call k on the staged set k, copied
        into its lent pool behind the wait, just before `start`), or its empty calls (`calls`
        False: call k with launches[k % len] empty kernels): (span us, reply). A chunk the worker
        took too long to queue is clocked again behind a longer wait, which this lent's later
        chunks of as many calls start from (empty calls have no warm-up to size it). `timed`
        False (a checked call, the first one compiling): the same steps, its span not judged, so
        however long it takes to queue, it is run once."""
        worker = self.clock.worker
        wait_ms = min(_QUEUE_SPIN_MS[1], max(_QUEUE_SPIN_MS[0], 1.5 * count * self.queue_us / 1000 + 2))
        wait_ms = max(wait_ms, self.waits_ms.get(count, 0.0))
        held = 0  # tries in a row whose queueing ended as the GPU reached `go`
        while True:
            copying, start, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            torch.cuda._sleep(int(wait_ms * 1000 * self.clock.cycles))
            launched = time.perf_counter()
            copying.record()
            inputs = self.lend_sets() if calls else {}
            start.record()
            self.clock.go.record()
            worker.send(
                "chunk",
                {
                    "count": count,
                    "calls": calls,
                    "launches": list(launches),
                    "poison": self.clock.task.category.is_hip,
                    "inputs": inputs,
                },
            )
            worker.receive()  # queued: every call is behind `go`
            queued_ms = (time.perf_counter() - launched) * 1000
            self.clock.done.wait()
            # The outputs judged are the ones in the slots now, before `end`: a worker that records
            # `done` ahead of its work (or not at all) leaves poison here, not a shorter span.
            self.snapshot_bytes.copy_(self.outputs.bytes)
            end.record()
            torch.cuda.synchronize()
            header, _ = worker.receive()
            outcome, held = queueing(queued_ms, wait_ms, held) if timed else ("ok", 0)
            if outcome == "ok":
                if timed:
                    self.waits_ms[count] = wait_ms
                if calls and timed:
                    self.copies_us["worker"].append(elapsed_us(copying, start))
                return elapsed_us(start, end), header
            if outcome != "again":  # the GPU may have idled inside the span: no bound
                why = ": its host waited for the GPU (a call synchronised, or its launches filled the stream's queue)"
                raise QueueBlocked(
                    f"{self.whose} took {queued_ms:.0f} ms to queue {count} calls (the judge waited "
                    f"{wait_ms:.0f} ms, at most {_QUEUE_SPIN_MS[1]:.0f}){why if outcome == 'held' else ''}",
                    on_gpu=outcome == "held",
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
        self.judge_reply(reply)
        for key, value in reported_landing(reply.get("landing"), self.layout.count).items():
            self.landing["worker"][key] += value
        errors = [str(e)[:2000] for e in reply.get("errors", [])][:5] if isinstance(reply.get("errors"), list) else []
        # The lent inputs of every timed call, as of every checked one: untouched unless written in place.
        task = self.clock.task
        writable = [spec.name for spec in task.outputs if spec.inplace]
        changed = changed_in_calls([spec.name for spec in task.inputs], self.lent, self.staged, writable)
        if changed:
            errors.insert(0, changed)
        self.phases["candidate"] += time.perf_counter() - began
        return span, [float(t) for t in times], errors

    def checked_call(self, writable: Sequence[str], where: str) -> list[torch.Tensor] | str:
        """One checked call of the candidate on the staged set (stage_given), through the timed
        chunk's steps, untimed: the judge's copies of what it left in the output slot, or what was
        wrong (its error, or an input it modified that it may not write)."""
        self.outputs.bytes.fill_(0xFF)  # poison: NaN for floats, -1 for integers
        _, reply = self.clocked(1, timed=False)
        self.judge_reply(reply, where)
        errors = reply.get("errors")
        if isinstance(errors, list) and errors:
            return str(errors[0])[:4000]
        names = [spec.name for spec in self.clock.task.inputs]
        changed = changed_inputs(names, self.lent[0], self.staged[0], writable)
        if changed:
            return changed
        return [typed_view(self.snapshot_bytes, place).clone() for place in self.layout.outputs[0]]

    def same_bits(self, first: int, second: int) -> bool:
        """Whether two calls of the last chunk left the same bytes in every output slot (the
        judge's snapshot, taken inside the span)."""
        places = self.layout.outputs
        view = self.snapshot_bytes
        return all(same_bits(typed_view(view, a), typed_view(view, b)) for a, b in zip(places[first], places[second]))

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
                got = stacked(self.snapshot_bytes, places, index, first, n)
                want = stacked(self.reference_bytes, places, index, first, n)
                bad[first : first + n] |= mismatch_mask(got, want, tol).any(dim=1)
        result = int(bad.sum())
        self.phases["validate"] += time.perf_counter() - began
        return result
