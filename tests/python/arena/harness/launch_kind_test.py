"""Matching the worker's launch kind to the judge's (matching.Workers.match) on the CPU: the loop
over fresh workers with a judge whose readings are given, and the spare worker started beside
the first, with workers that only note what they are asked. The readings themselves, on a GPU:
gpu_test.py's test_the_worker_is_matched_to_the_judges_launch_kind_when_asked."""

import time
from functools import partial
from typing import Any, Sequence

import pytest

from arena.harness import matching
from arena.harness.judged_timing import KIND_MATCH_US
from arena.harness.lent import QueueBlocked
from arena.harness.matching import Workers, may_replace
from arena.harness.run import Run
from arena.harness.settings import MAX_MATCH_LAUNCHES, HarnessSettings
from arena.task.task import Case

_CASE = Case(name="main", dims={}, dtype="float32", seed=0, timed=True)


class _Judge:
    """Reads each worker's later launch from a list, as Judge.later_launch_us would on a GPU."""

    def __init__(self, readings: Sequence[tuple[float, float] | QueueBlocked]) -> None:
        self.readings = iter(readings)
        self.worker: Any = None

    def use_worker(self, worker: Any) -> None:
        self.worker = worker

    def later_launch_us(self, case: Case, references: Any) -> dict[str, float]:
        reading = next(self.readings)
        if isinstance(reading, QueueBlocked):
            raise reading
        judge, worker = reading
        return {"judge": judge, "worker": worker}


def _reader(judge: _Judge) -> tuple[Run, Any]:
    """A run that only marks (no job, no device), and the reading the setup gives Workers.match:
    the judge's, taken once more where held (Run._held_once)."""
    run = Run.__new__(Run)
    run._marks, run._stage_start = [], time.perf_counter()
    return run, partial(run._held_once, partial(judge.later_launch_us, _CASE, []), "a later launch's reading")


def _ready(judge: _Judge) -> Any:
    """What Run._ready does with a replacement, less the HIP build: its start read, the clock bound."""

    def ready(worker: Any) -> None:
        worker.receive()
        judge.use_worker(worker)

    return ready


def _matched(readings: Sequence[tuple[float, float] | QueueBlocked], tries: int) -> tuple[list[bool], list[str], str]:
    """(for each replacement, whether another may follow it; the setup's marks; the measurement's record)."""
    _Worker.made = []
    judge = _Judge(readings)
    run, read = _reader(judge)
    workers = Workers(run._mark, _Worker())  # type: ignore[arg-type]
    replaced: list[bool] = []
    replace = workers.replace

    def noted(another: bool, close: bool = True) -> Any:
        replaced.append(another)
        return replace(another, close)

    workers.replace = noted  # type: ignore[method-assign]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matching, "CandidateWorker", _Worker)
        record = workers.match(read, tries, _ready(judge), judge.use_worker)
    return replaced, run._marks, record


def test_a_worker_of_the_judges_kind_is_kept():
    ahead, marks, record = _matched([(1.90, 1.90 + KIND_MATCH_US * 0.8)], tries=2)
    assert ahead == []
    assert marks[-1].endswith("a later launch (us), worker by worker: judge 1.900, worker 1.940")
    assert record == "judge 1.900, worker 1.940 us (worker 1 of at most 3, matched)"


def test_fresh_workers_until_one_is_the_judges_kind():
    ahead, marks, record = _matched([(1.90, 2.08), (1.91, 2.06), (1.90, 1.92), (1.90, 2.10)], tries=3)
    assert ahead == [True, True]  # the third worker matched: the fourth reading is never taken
    assert marks[-1].count("judge ") == 3 and "judge 1.900, worker 1.920" in marks[-1]
    assert record == "judge 1.900, worker 1.920 us (worker 3 of at most 4, matched)"


def test_no_more_workers_than_asked_and_the_last_one_stays():
    ahead, marks, record = _matched([(1.90, 2.08), (1.90, 2.09), (1.90, 2.07)], tries=2)
    assert ahead == [True, False]  # no spare ahead of the last replacement
    assert marks[-1].count("judge ") == 3 and marks[-1].endswith("judge 1.900, worker 2.070")
    assert record == "judge 1.900, worker 2.070 us (worker 3 of at most 3, none matched)"


def test_where_none_matches_the_nearest_stays_and_every_other_is_closed():
    ahead, marks, record = _matched([(1.90, 2.08), (1.90, 1.96), (1.90, 2.12), (1.90, 1.80)], tries=3)
    first, second, third, fourth = _Worker.made
    assert ahead == [True, True, False]
    assert first.ended == third.ended == fourth.ended == "closed" and second.ended == ""
    assert marks[-1].endswith("worker 2 kept, the nearest to the judge's launch kind")
    assert record == "judge 1.900, worker 1.960 us (worker 2 of at most 4, none matched, the nearest of 4 kept)"


def test_a_worker_nearer_than_the_one_kept_replaces_it():
    _, _, record = _matched([(1.90, 2.08), (1.90, 2.00), (1.90, 1.97), (1.90, 2.12)], tries=3)
    first, second, third, fourth = _Worker.made
    assert first.ended == second.ended == fourth.ended == "closed" and third.ended == ""
    assert record.startswith("judge 1.900, worker 1.970 us (worker 3 of at most 4")


def test_a_slower_worker_is_as_far_from_the_judge_as_a_faster_one():
    ahead, _, _ = _matched([(2.08, 1.90), (2.08, 2.07)], tries=1)
    assert ahead == [False]  # the only replacement: nothing ahead of it


def _held() -> QueueBlocked:
    return QueueBlocked("the candidate's worker took 40 ms to queue 63 calls (the judge waited 40 ms)", on_gpu=True)


def test_a_reading_held_by_the_gpu_is_taken_once_more():
    ahead, marks, record = _matched([_held(), (1.90, 1.92)], tries=2)
    assert ahead == [] and record.endswith("(worker 1 of at most 3, matched)")
    assert any(m.endswith("a later launch's reading held: " + str(_held()) + "; read once more") for m in marks), marks


def test_a_reading_held_twice_is_the_setups_fault():
    with pytest.raises(QueueBlocked, match="to queue 63 calls"):
        _matched([_held(), _held(), (1.90, 1.92)], tries=2)


def test_a_reading_too_slow_to_queue_is_not_taken_again():
    slow = QueueBlocked("the candidate's worker took 2500 ms to queue 63 calls", on_gpu=False)
    with pytest.raises(QueueBlocked, match="2500 ms"):
        _matched([slow, (1.90, 1.92)], tries=2)


def test_settings_bound_the_fresh_workers():
    assert HarnessSettings(match_launches=MAX_MATCH_LAUNCHES).match_launches == MAX_MATCH_LAUNCHES
    for wrong in (-1, MAX_MATCH_LAUNCHES + 1):
        with pytest.raises(ValueError, match=f"match_launches {wrong}"):
            HarnessSettings(match_launches=wrong)


class _Worker:
    """A worker that notes what it is asked, and whether it was killed or closed."""

    made: list["_Worker"] = []

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.ended = ""
        self.process = self  # _close_spare kills the process
        _Worker.made.append(self)

    def send(self, op: str, header: Any = None) -> None:
        self.sent.append(op)

    def receive(self) -> tuple[dict[str, Any], list[bytearray]]:
        return {"ok": True}, []

    def kill(self) -> None:
        self.ended = "killed"

    def close(self) -> None:
        self.ended = self.ended or "closed"


def _with_spare(
    monkeypatch: pytest.MonkeyPatch, readings: list[tuple[float, float]], tries: int, timed: bool = True
) -> tuple[Workers, _Judge]:
    """Workers started as the setup starts them (a spare where they may be replaced), then matched."""
    _Worker.made = []
    monkeypatch.setattr(matching, "CandidateWorker", _Worker)
    judge = _Judge(readings)
    run, read = _reader(judge)
    workers = Workers(run._mark)
    workers.start({}, may_replace(timed, tries, "cuda"))
    judge.worker = workers.current
    if timed and tries:
        workers.match(read, tries, _ready(judge), judge.use_worker)
    workers.close_spare()
    return workers, judge


def test_a_mismatched_worker_is_replaced_by_the_spare_started_beside_it(monkeypatch):
    workers, judge = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.91)], tries=1)
    first, spare = _Worker.made
    assert first.sent == ["start"] and first.ended == "closed"
    assert spare.sent == ["start"] and workers.current is spare and spare.ended == ""
    assert judge.worker is spare  # the judge's clock binds the kept worker
    assert workers.spare is None and len(_Worker.made) == 2  # the last try: no spare ahead of it


def test_taking_the_spare_starts_the_next_while_tries_remain(monkeypatch):
    workers, _ = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.91)], tries=3)
    first, spare, ahead = _Worker.made
    assert first.ended == "closed" and workers.current is spare and spare.ended == ""
    assert ahead.sent == [] and ahead.ended == "killed"  # the spare matched: the one ahead is not needed
    assert workers.spare is None


def test_a_matched_worker_keeps_its_place_and_the_spare_is_killed(monkeypatch):
    workers, _ = _with_spare(monkeypatch, [(1.90, 1.92)], tries=3)
    first, spare = _Worker.made
    assert workers.current is first and first.ended == ""
    assert spare.ended == "killed" and workers.spare is None


def test_each_replacement_was_started_ahead_of_its_turn(monkeypatch):
    workers, judge = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 2.07), (1.90, 2.09), (1.90, 2.06)], tries=3)
    first, spare, third, fourth = _Worker.made  # the third started as the spare was taken, the fourth as the third was
    assert first.ended == spare.ended == third.ended == "closed"
    assert third.sent == fourth.sent == ["start"]  # each asked to open the device once taken, not beside a reading
    assert workers.current is fourth and fourth.ended == "" and workers.spare is None
    assert judge.worker is fourth


def test_a_spare_started_beside_a_reading_opens_no_device_until_taken(monkeypatch):
    _Worker.made = []
    monkeypatch.setattr(matching, "CandidateWorker", _Worker)
    spare_asked_while_read: list[list[str] | None] = []

    class _Reading(_Judge):
        def later_launch_us(self, case: Case, references: Any) -> dict[str, float]:
            spare_asked_while_read.append(None if workers.spare is None else list(workers.spare.sent))  # type: ignore[attr-defined]
            return super().later_launch_us(case, references)

    judge = _Reading([(1.90, 2.08), (1.90, 2.07), (1.90, 1.91)])
    run, read = _reader(judge)
    workers = Workers(run._mark)
    workers.start({}, spares=True)
    workers.match(read, 3, _ready(judge), judge.use_worker)
    # The first spare, started beside the setup, opens its device at once; the ones started beside
    # a reading only once taken.
    assert spare_asked_while_read == [["start"], [], []]
    third, fourth = _Worker.made[2:]
    assert workers.current is third and third.sent == ["start"] and fourth.sent == []


def test_the_nearest_kept_is_the_worker_the_judges_clock_binds(monkeypatch):
    workers, judge = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.96), (1.90, 2.10), (1.90, 2.09)], tries=3)
    first, spare, third, fourth = _Worker.made
    assert workers.current is spare and spare.ended == ""
    assert first.ended == third.ended == fourth.ended == "closed"
    assert judge.worker is spare


def test_without_a_spare_a_replacement_is_a_fresh_start(monkeypatch):
    workers, _ = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.93)], tries=1)
    assert workers.spare is None
    workers.replace(another=False)
    first, spare, fresh = _Worker.made
    assert spare.ended == "closed" and fresh.sent == ["start"] and workers.current is fresh


def test_no_spare_unless_matching_is_asked_for_a_timed_run_on_a_gpu(monkeypatch):
    _with_spare(monkeypatch, [(1.90, 1.90)], tries=0)
    assert len(_Worker.made) == 1
    _with_spare(monkeypatch, [], tries=2, timed=False)
    assert len(_Worker.made) == 1
    assert may_replace(True, 2, "cuda") and may_replace(True, 1, "rocm")
    assert not may_replace(True, 2, "cpu") and not may_replace(False, 2, "cuda") and not may_replace(True, 0, "cuda")


def test_closing_ends_the_spare_and_the_worker(monkeypatch):
    _Worker.made = []
    monkeypatch.setattr(matching, "CandidateWorker", _Worker)
    workers = Workers(lambda _: None)
    with pytest.raises(RuntimeError, match="not been started"):
        _ = workers.current
    workers.start({}, spares=True)
    workers.close()
    first, spare = _Worker.made
    assert first.ended == "closed" and spare.ended == "killed" and workers.spare is None


def test_the_judge_binds_its_clock_to_the_kept_worker():
    from types import SimpleNamespace

    from arena.harness.judged_timing import Judge

    judge = Judge.__new__(Judge)  # no GPU: only the binding
    first, fresh = _Worker(), _Worker()
    judge.worker, judge.clock = first, SimpleNamespace(worker=first)  # type: ignore[assignment]
    judge.use_worker(fresh)  # type: ignore[arg-type]
    assert judge.worker is fresh and judge.clock.worker is fresh


def _readying(built_early: bool, failure: BaseException | None) -> tuple[Run, _Worker, _Judge]:
    """Run._ready on a replacement, for a run whose HIP library was (or was not) built beside the setup."""
    from types import SimpleNamespace

    run, _ = _reader(_Judge([]))
    judge = _Judge([])
    run.judge = judge  # type: ignore[assignment]
    run.device = SimpleNamespace(backend="cpu", index=0)  # type: ignore[assignment]
    run._built_early, run._build_failure = built_early, failure
    fresh = _Worker()
    run.workers = Workers(run._mark, fresh)  # type: ignore[arg-type]  # replace() made it the current one
    run._ready(fresh)  # type: ignore[arg-type]
    return run, fresh, judge


def test_a_replacement_loads_the_library_already_built_and_is_bound():
    run, fresh, judge = _readying(built_early=True, failure=None)
    assert fresh.sent == [] and judge.worker is fresh  # no second compile: the library is a file any worker loads
    assert "a fresh worker started" in run._marks[-1]


def test_a_replacement_is_asked_again_for_a_build_that_failed():
    from arena.harness.candidate_worker import CandidateFailed

    run, fresh, _ = _readying(built_early=True, failure=CandidateFailed("the compiler was killed"))
    assert fresh.sent == ["build"] and run._build_failure is None  # the fresh worker's build succeeded


def test_a_replacement_without_an_early_build_builds_nothing():
    _, fresh, _ = _readying(built_early=False, failure=None)
    assert fresh.sent == []


def test_a_reading_that_fails_while_an_earlier_worker_is_kept_leaves_none_alive(monkeypatch):
    _Worker.made = []
    monkeypatch.setattr(matching, "CandidateWorker", _Worker)
    judge = _Judge([(1.90, 2.08), (1.90, 2.12), _held(), _held()])  # the third worker's reading held twice
    run, read = _reader(judge)
    workers = Workers(run._mark)
    workers.start({}, spares=True)
    with pytest.raises(QueueBlocked):
        workers.match(read, 3, _ready(judge), judge.use_worker)
    first = _Worker.made[0]
    assert first.ended == ""  # the nearest so far, kept alive while the third was read
    workers.close()  # as Run.close does when the setup fails
    assert all(w.ended for w in _Worker.made), [w.ended for w in _Worker.made]
