"""The baseline timed in a worker of its own (settings.baseline_worker, an experiment, off).

In the judge's default layout the candidate's calls run in a worker and the baseline's in the
judge, so each side's samples come from a different kind of process: a worker-like child read a
kernel 0.8-16% slower than its parent (bench/pending_wait_probe.py, bench/results/2026-12-06.md,
session 35), and a 3 us copy's no-op reads 1.02-1.06. Here the baseline gets a worker like the
candidate's, started by the judge before any candidate code, loaded with the baseline as the judge
built it, and timed through the same chunk procedure: the same bind, lent pool, `go`, samples from
its own events, `done`, the slots snapshot by the judge (which become the chunk's references).
Both sides' spans are then read on the judge's clock around one procedure, so the bound's paired
figure (bound.paired_excess) compares like with like.

Only harness and baseline code run in this worker; its replies are trusted as the judge's own
figures would be. The candidate's worker is frozen while it runs, and cannot reach it: another
Landlock domain (signals, ptrace), its own pipes, its own blocks and events. Freezing the candidate
and counting what the candidate left running pass over this worker's processes (trusted_pids).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

import torch

from arena.harness.candidate_worker import CandidateFailed, CandidateWorker, trust, untrust
from arena.harness.chunk_clock import ChunkClock
from arena.harness.device import Device
from arena.harness.frames import WorkerError, WorkerGone
from arena.harness.lent import Layout, Lent
from arena.task.task import Case, Task


class BaselineFault(RuntimeError):
    """The baseline's worker failed. Before any candidate code a fault of the setup's (no verdict,
    run again); after, the candidate's RUNTIME_ERROR, as a failure of the judge's own baseline is
    (its code may have taken the memory the baseline needed): never read as the candidate's worker
    failing or tampering with its pipe."""


@contextlib.contextmanager
def _faults(what: str) -> Iterator[None]:
    try:
        yield
    except (CandidateFailed, WorkerError, WorkerGone) as failure:
        raise BaselineFault(f"the baseline's own worker failed ({what}): {failure}") from None


class BaselineApart:
    """The baseline's worker, from its start in the setup to its close with the run."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.worker = CandidateWorker()
        self.started = False
        self.clock: ChunkClock | None = None
        try:
            self.worker.send("start", request)
        except WorkerError:
            self.worker.close()
            raise

    def load(self) -> None:
        """Its start read, then the baseline loaded there: called at the end of the judge's setup,
        before a HIP baseline's built files are deleted (Run._load_apart)."""
        with _faults("start and load"):
            if not self.started:
                self.worker.receive()
                self.started = True
                trust(self.worker)
            self.worker.request("load", {"side": "baseline"})

    def calibrate(self, device: Device, task: Task, same_places: bool) -> None:
        """Its own chunk clock: events, flusher and probe of its own (never shared with the
        candidate's worker, which could record them)."""
        with _faults("its chunk clock"):
            self.clock = ChunkClock(device, self.worker, task)
        self.clock.same_places = same_places

    @contextlib.contextmanager
    def lent(
        self,
        case: Case,
        layout: Layout,
        scalars: dict[str, Any],
        dims: dict[str, Any],
        spin: int,
        queue_us: float = 0.0,
        warm: bool = False,
    ) -> Iterator[Lent]:
        """A lent block of its own for `case`, laid out as the candidate's (its slots' snapshot is
        the chunk's references), bound and let go with its worker's failures as BaselineFault; one
        in letting go, while something else is raised, does not hide that."""
        if self.clock is None:
            raise RuntimeError("the baseline's worker has no chunk clock yet (calibrate)")
        block = Lent(self.clock, case, layout, None, scalars, dims, spin, queue_us, warm=warm)
        block.whose = "the baseline's own worker"
        with _faults(f"binding {case.name}"):
            block.__enter__()
        raised = True
        try:
            yield block
            raised = False
        finally:
            try:
                with _faults(f"letting go of {case.name}"):
                    block.__exit__(None, None, None)
            except BaselineFault:
                if not raised:
                    raise

    def first_calls(
        self,
        case: Case,
        sets: Sequence[list[torch.Tensor]],
        reference_like: Sequence[torch.Tensor],
        scalars: dict[str, Any],
        dims: dict[str, Any],
        spin: int,
        warm: bool,
    ) -> None:
        """The baseline called once on each of `sets` through a chunk of one, untimed (its JIT
        compiles for the case's shapes here, not inside a timed chunk)."""
        with (
            _faults(f"first calls on {case.name}"),
            self.lent(case, Layout.of(reference_like, 1), scalars, dims, spin, warm=warm) as lent,
        ):
            for one in sets:
                lent.stage_given([one])
                _, reply = lent.clocked(1, timed=False)
                errors = reply.get("errors")
                if isinstance(errors, list) and errors:
                    raise BaselineFault(f"the baseline failed in its own worker on {case.name}: {errors[0]}")

    def close(self) -> None:
        try:
            self.worker.close()
        finally:
            if self.started:
                untrust(self.worker)
