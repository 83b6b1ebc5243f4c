"""What every timed chunk of a job uses, whatever the case: the candidate's worker, the
interprocess `go` and `done` events, the flusher, the placement pool, the GPU's cycle calibration
and the idle-GPU probe (docs/harness.md, "A timed chunk"). The judge makes one (judged_timing.py);
each case's lent block (lent.py) runs its chunks through it."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

import torch

from arena.harness.candidate_worker import CandidateWorker
from arena.harness.device import Device
from arena.harness.flush import Flusher
from arena.harness.placement import Scatter
from arena.harness.shared_gpu import SharedEvent, runtime
from arena.harness.timing import cycles_per_us, elapsed_us
from arena.harness.verdict import Verdict
from arena.task.task import Task

# The probe must outlast a time slice between contexts, or it never sees the other context's
# queued work (docs/harness.md, "Why each constant").
_PROBE_MS, _PROBE_SLOWER = 12.0, 1.3


class ChunkClock:
    def __init__(self, device: Device, worker: CandidateWorker, task: Task) -> None:
        self.device, self.worker, self.task = device, worker, task
        self.rt = runtime()
        self.go, self.done = SharedEvent.create(self.rt), SharedEvent.create(self.rt)
        self.flusher = Flusher(device)
        self.scatter = Scatter(device.torch_device)  # every timed call's inputs at a new place
        self.same_places = False  # settings.same_places: the worker's sets where the judge's lie
        self.cycles = cycles_per_us()
        self.probe_us = self.probe()  # before the candidate is loaded: the GPU is ours alone

    def probe(self) -> float:
        """The judge's probe kernel's time now, us."""
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
            seen = self.probe()
            if seen <= _PROBE_SLOWER * self.probe_us:
                return
            time.sleep(0.05)
        raise Verdict(
            "CHEAT_DETECTED",
            f"the candidate's GPU work kept running while its processes were frozen (the judge's "
            f"probe took {seen:.0f} us, {self.probe_us:.0f} us on an idle GPU): the baseline would "
            "have been timed on a shared GPU",
        )

    @contextlib.contextmanager
    def candidate_frozen(self) -> Iterator[None]:
        """The candidate's processes frozen and its GPU work done (quiet), around trusted work that
        may compile the baseline after candidate code has run: from caches those processes can
        write (triton_cache.py), and with an autotuner that must not choose beside their work."""
        self.worker.freeze()
        try:
            self.quiet()
            yield
        finally:
            self.worker.thaw()

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
