"""The candidate's worker as the judge keeps it: started ahead, and matched to the judge's launch kind.

Each process keeps a kind for life: a later launch in its stream costs about 1.90 us in some
processes and 2.05-2.10 us in others (H100), and a call of n launches keeps (n - 1) x the
difference between the two sides (judged_timing.KIND_CYCLE). So, before any candidate code runs,
the judge reads both sides' later launch and takes fresh workers, up to settings.match_launches,
until one is within KIND_MATCH_US of its own (Workers.match). Every replacement's process is
started with the setup, so that its import of torch (1.2-2.0 s) runs beside the setup and the
readings instead of after them: the first opens its device at once, the others once taken.
"""

from __future__ import annotations

from typing import Any, Callable

from arena.harness.candidate_worker import CandidateWorker
from arena.harness.judged_timing import KIND_MATCH_US


def may_replace(timed: bool, match_launches: int, backend: str) -> bool:
    """Whether the worker may be matched to the judge's launch kind (and spares started): asked
    for (settings.match_launches), on a GPU, when timing; a kind matters only to timed chunks."""
    return timed and match_launches > 0 and backend != "cpu"


class Workers:
    """The candidate's worker and, while it may still be replaced, the spares started ahead of it."""

    def __init__(self, mark: Callable[[str], None], worker: CandidateWorker | None = None) -> None:
        self._mark = mark  # a line of the setup's log
        self._current = worker  # started ahead by the child, or by start()
        # The replacements started ahead, in the order they are taken, and whether each was sent
        # `start` (its device opened) when started.
        self._ahead: list[tuple[CandidateWorker, bool]] = []
        self._request: dict[str, Any] = {}  # what every worker is asked to start with
        # While matching, an earlier worker kept alive, idle: the nearest read so far (its index, itself).
        self._nearest: tuple[int, CandidateWorker] | None = None

    @property
    def current(self) -> CandidateWorker:
        """The worker the judge asks (started by start(), or ahead by the child)."""
        if self._current is None:
            raise RuntimeError("the candidate's worker has not been started")
        return self._current

    @property
    def spares(self) -> list[CandidateWorker]:
        """The replacements started ahead and not yet taken, in the order they will be."""
        return [worker for worker, _ in self._ahead]

    def start(self, request: dict[str, Any], spares: int) -> None:
        """The worker asked to start (it imports torch while the judge draws inputs; its reply is
        read once the setup is done) and, where it may be replaced (matching asked, a GPU, timing:
        `spares` is settings.match_launches, else 0), every replacement's process beside it. Half
        the time a worker is of the other kind. The first spare opens its device at once, beside
        the setup; the others only import torch and open it once taken (about 0.2 s): a context
        made on the GPU beside a reading could stall the chunks read (a setup once failed as held
        while spares did, bench/results/2026-12-07.md, session 41)."""
        self._request = request
        if self._current is None:
            self._current = CandidateWorker()
        self._current.send("start", request)
        for index in range(spares):
            spare = CandidateWorker()
            if index == 0:
                spare.send("start", request)
            self._ahead.append((spare, index == 0))

    def replace(self, close: bool = True) -> CandidateWorker:
        """The worker closed (unless kept as the nearest so far) and the next spare in its place
        (or, with none left, a fresh one started as the first was). The new worker, its `start`
        sent, its reply not yet read."""
        if close:
            self.current.close()
        if self._ahead:  # started with the setup: its torch is imported by now
            self._current, asked = self._ahead.pop(0)
            if not asked:  # its device opened only now, with no reading beside it
                self._current.send("start", self._request)
        else:
            self._current = CandidateWorker()
            self._current.send("start", self._request)
        return self._current

    def match(
        self,
        read: Callable[[], dict[str, float]],
        tries: int,
        ready: Callable[[CandidateWorker], None],
        bind: Callable[[CandidateWorker], None],
    ) -> str:
        """Fresh workers, up to `tries` of them, until the current one's later launch is within
        KIND_MATCH_US of the judge's. `read()` takes both sides' reading with the current worker
        ({"judge": us, "worker": us}), `ready(worker)` readies a replacement (its start read, the
        judge's clock bound to it), `bind(worker)` binds the judge's clock to an earlier worker
        kept. Where none matches, the nearest read stays (kept alive, idle, while the later ones
        are read). The measurement's record of the kept worker (`launch_match`)."""
        readings: list[str] = []
        distances: list[float] = []
        for tried in range(tries + 1):
            # Both sides read again with every worker: the judge's own reading moved up to 0.15 us
            # within one evaluation (bench/results/2026-12-07.md, session 40), so compare in one reading.
            later = read()
            readings.append(f"judge {later['judge']:.3f}, worker {later['worker']:.3f}")
            distances.append(abs(later["worker"] - later["judge"]))
            if distances[-1] <= KIND_MATCH_US or tried == tries:
                break
            keep = self._nearest is None or distances[-1] < distances[self._nearest[0]]
            if keep and self._nearest is not None:
                self._nearest[1].close()
            self._nearest = (tried, self.current) if keep else self._nearest
            ready(self.replace(close=not keep))
        self._mark(f"a later launch (us), worker by worker: {'; '.join(readings)}")
        kept = self._keep_nearest(distances, bind)
        state = "matched" if distances[kept] <= KIND_MATCH_US else "none matched"
        if kept < len(distances) - 1:
            state += f", the nearest of {len(distances)} kept"
        return f"{readings[kept]} us (worker {kept + 1} of at most {tries + 1}, {state})"

    def _keep_nearest(self, distances: list[float], bind: Callable[[CandidateWorker], None]) -> int:
        """The nearer of the last worker read and the earlier one kept stays, the other closed:
        which one (its index)."""
        last = len(distances) - 1
        if self._nearest is None:
            return last
        (earlier, worker), self._nearest = self._nearest, None
        if distances[earlier] >= distances[last]:
            worker.close()
            return last
        self.current.close()
        self._current = worker
        bind(worker)
        self._mark(f"worker {earlier + 1} kept, the nearest to the judge's launch kind")
        return earlier

    def close_spares(self) -> None:
        """The spares not taken, killed, not asked to exit (one may still be importing torch: an
        exit would wait for it); nothing of the candidate's ever ran there, and each one's init and
        worker die with it (apart.py)."""
        for spare, _ in self._ahead:
            spare.process.kill()
            spare.close()
        self._ahead = []

    def close(self) -> None:
        """The spares, an earlier worker still kept (a reading failed while matching) and the
        worker end (in a sandbox, a worker's PID namespace ends whatever it started)."""
        self.close_spares()
        if self._nearest is not None:
            self._nearest[1].close()
            self._nearest = None
        if self._current is not None:
            self._current.close()
