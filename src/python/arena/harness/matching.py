"""The candidate's worker as the judge keeps it: started ahead, and matched to the judge's launch kind.

Each process keeps a kind for life: a later launch in its stream costs about 1.90 us in some
processes and 2.05-2.10 us in others (H100), and a call of n launches keeps (n - 1) x the
difference between the two sides (judged_timing.KIND_CYCLE). So, before any candidate code runs,
the judge reads both sides' later launch and takes fresh workers, up to settings.match_launches,
until one is within KIND_MATCH_US of its own (Workers.match). A spare is started beside the first
worker, and another whenever one is taken while tries remain, so that a replacement's start (its
import of torch) runs beside the setup or a reading instead of after it.
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
    """The candidate's worker and, while it may still be replaced, the spare started ahead of it."""

    def __init__(self, mark: Callable[[str], None], worker: CandidateWorker | None = None) -> None:
        self._mark = mark  # a line of the setup's log
        self._current = worker  # started ahead by the child, or by start()
        self._spare: CandidateWorker | None = None  # the next replacement, started ahead of it
        self._spare_asked = False  # whether the spare was sent `start` (its device opened) when started
        self._request: dict[str, Any] = {}  # what every worker is asked to start with
        self._spares = False  # whether the worker may be replaced
        # While matching, an earlier worker kept alive, idle: the nearest read so far (its index, itself).
        self._nearest: tuple[int, CandidateWorker] | None = None

    @property
    def current(self) -> CandidateWorker:
        """The worker the judge asks (started by start(), or ahead by the child)."""
        if self._current is None:
            raise RuntimeError("the candidate's worker has not been started")
        return self._current

    @property
    def spare(self) -> CandidateWorker | None:
        return self._spare

    def start(self, request: dict[str, Any], spares: bool) -> None:
        """The worker asked to start (it imports torch while the judge draws inputs; its reply is
        read once the setup is done) and, where it may be replaced (`spares`: matching asked, a
        GPU, timing), a spare beside it, asked at once: its start runs beside the setup's."""
        self._request, self._spares = request, spares
        if self._current is None:
            self._current = CandidateWorker()
        self._current.send("start", request)
        self._start_spare(ask=True)

    def _start_spare(self, ask: bool) -> None:
        """Half the time a worker is of the other kind, and a spare's start then runs beside the
        setup or a reading. Beside a reading it only imports torch (`ask` False): a context made on
        the GPU then could stall the chunks read (a setup once failed as held,
        bench/results/2026-12-07.md, session 41); it is asked to open the device when taken."""
        if self._spares:
            self._spare, self._spare_asked = CandidateWorker(), ask
            if ask:
                self._spare.send("start", self._request)

    def replace(self, another: bool, close: bool = True) -> CandidateWorker:
        """The worker closed (unless kept as the nearest so far) and the spare in its place (or,
        with no spare, a fresh one started as the first was); where `another` replacement may
        follow, the next spare's process started now, so its import of torch (1.2-1.9 s) runs
        beside this worker's reading. The new worker, its `start` sent, its reply not yet read."""
        if close:
            self.current.close()
        if self._spare is not None:  # started earlier: its torch is imported by now
            self._current, self._spare = self._spare, None
            if not self._spare_asked:  # its device opened only now, with no reading beside it
                self._current.send("start", self._request)
        else:
            self._current = CandidateWorker()
            self._current.send("start", self._request)
        if another:
            self._start_spare(ask=False)
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
            ready(self.replace(another=tried + 1 < tries, close=not keep))
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

    def close_spare(self) -> None:
        """Killed, not asked to exit (it may still be importing torch: an exit would wait for it);
        nothing of the candidate's ever ran there, and its init and worker die with it (apart.py)."""
        if self._spare is not None:
            self._spare.process.kill()
            self._spare.close()
            self._spare = None

    def close(self) -> None:
        """The spare, an earlier worker still kept (a reading failed while matching) and the
        worker end (in a sandbox, a worker's PID namespace ends whatever it started)."""
        self.close_spare()
        if self._nearest is not None:
            self._nearest[1].close()
            self._nearest = None
        if self._current is not None:
            self._current.close()
