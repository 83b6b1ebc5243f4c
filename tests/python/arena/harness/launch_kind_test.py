"""Matching the worker's launch kind to the judge's (run.Run._match_worker) on the CPU: the loop
over fresh workers with a judge whose readings are given, and the spare worker started beside
the first, with workers that only note what they are asked. The readings themselves, on a GPU:
gpu_test.py's test_the_worker_is_matched_to_the_judges_launch_kind_when_asked."""

import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from arena.harness import run as run_module
from arena.harness.judged_timing import KIND_MATCH_US
from arena.harness.lent import QueueBlocked
from arena.harness.run import Run
from arena.harness.settings import MAX_MATCH_LAUNCHES, HarnessSettings
from arena.task.task import Case


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


def _matched(readings: Sequence[tuple[float, float] | QueueBlocked], tries: int) -> tuple[list[str], list[str], str]:
    """(the backends each fresh worker was started with, the setup's marks, the measurement's record)."""
    run = Run.__new__(Run)  # the loop only: no job, no device, no worker process
    run.settings = HarnessSettings(match_launches=tries)
    run._marks, run._stage_start, run.environment = [], time.perf_counter(), {}
    run.judge = _Judge(readings)  # type: ignore[assignment]
    _Worker.made = []
    run._worker = _Worker()  # type: ignore[assignment]
    started: list[str] = []

    def replace(backend: str, another: bool, close: bool = True) -> None:
        started.append(f"{backend}{'+spare' * another}")
        if close:
            run.worker.close()
        run._worker = _Worker()  # type: ignore[assignment]

    run._replace_worker = replace  # type: ignore[method-assign]
    run._match_worker(Case(name="main", dims={}, dtype="float32", seed=0, timed=True), [], "cuda")
    return started, run._marks, str(run.environment["launch_match"])


def test_a_worker_of_the_judges_kind_is_kept():
    started, marks, record = _matched([(1.90, 1.90 + KIND_MATCH_US * 0.8)], tries=2)
    assert started == []
    assert marks[-1].endswith("a later launch (us), worker by worker: judge 1.900, worker 1.940")
    assert record == "judge 1.900, worker 1.940 us (worker 1 of at most 3, matched)"


def test_fresh_workers_until_one_is_the_judges_kind():
    started, marks, record = _matched([(1.90, 2.08), (1.91, 2.06), (1.90, 1.92), (1.90, 2.10)], tries=3)
    assert started == ["cuda+spare", "cuda+spare"]  # the third worker matched: the fourth reading is never taken
    assert marks[-1].count("judge ") == 3 and "judge 1.900, worker 1.920" in marks[-1]
    assert record == "judge 1.900, worker 1.920 us (worker 3 of at most 4, matched)"


def test_no_more_workers_than_asked_and_the_last_one_stays():
    started, marks, record = _matched([(1.90, 2.08), (1.90, 2.09), (1.90, 2.07)], tries=2)
    assert started == ["cuda+spare", "cuda"]  # no spare ahead of the last replacement
    assert marks[-1].count("judge ") == 3 and marks[-1].endswith("judge 1.900, worker 2.070")
    assert record == "judge 1.900, worker 2.070 us (worker 3 of at most 3, none matched)"


def test_where_none_matches_the_nearest_stays_and_every_other_is_closed():
    started, marks, record = _matched([(1.90, 2.08), (1.90, 1.96), (1.90, 2.12), (1.90, 1.80)], tries=3)
    first, second, third, fourth = _Worker.made
    assert started == ["cuda+spare", "cuda+spare", "cuda"]
    assert first.ended == third.ended == fourth.ended == "closed" and second.ended == ""
    assert marks[-1].endswith("worker 2 kept, the nearest to the judge's launch kind")
    assert record == "judge 1.900, worker 1.960 us (worker 2 of at most 4, none matched, the nearest of 4 kept)"


def test_a_worker_nearer_than_the_one_kept_replaces_it():
    _, _, record = _matched([(1.90, 2.08), (1.90, 2.00), (1.90, 1.97), (1.90, 2.12)], tries=3)
    first, second, third, fourth = _Worker.made
    assert first.ended == second.ended == fourth.ended == "closed" and third.ended == ""
    assert record.startswith("judge 1.900, worker 1.970 us (worker 3 of at most 4")


def test_a_slower_worker_is_as_far_from_the_judge_as_a_faster_one():
    started, _, _ = _matched([(2.08, 1.90), (2.08, 2.07)], tries=1)
    assert started == ["cuda"]  # the only replacement: nothing ahead of it


def _held() -> QueueBlocked:
    return QueueBlocked("the candidate's worker took 40 ms to queue 63 calls (the judge waited 40 ms)", on_gpu=True)


def test_a_reading_held_by_the_gpu_is_taken_once_more():
    started, marks, record = _matched([_held(), (1.90, 1.92)], tries=2)
    assert started == [] and record.endswith("(worker 1 of at most 3, matched)")
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
) -> Run:
    """A run whose setup started its worker and, when asked for, a spare; then matched."""
    _Worker.made = []
    monkeypatch.setattr(run_module, "CandidateWorker", _Worker)
    judges = _Judge(readings)
    run = Run.__new__(Run)
    run.settings = HarnessSettings(match_launches=tries)
    run._marks, run._stage_start, run.timed, run.environment = [], time.perf_counter(), timed, {}
    run.dirs, run.task_dict, run._built_early = {"work": Path("w")}, {}, False
    run._worker, run._spare, run.judge = None, None, judges  # type: ignore[assignment]
    run.device = None  # type: ignore[assignment]
    run.task = None  # type: ignore[assignment]
    run._start_worker("cuda")
    run._start_spare("cuda")
    judges.worker = run._worker
    if timed:
        run._match_worker(Case(name="main", dims={}, dtype="float32", seed=0, timed=True), [], "cuda")
    run._close_spare()
    return run


def test_a_mismatched_worker_is_replaced_by_the_spare_started_beside_it(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.91)], tries=1)
    first, spare = _Worker.made
    assert first.sent == ["start"] and first.ended == "closed"
    assert spare.sent == ["start"] and run._worker is spare and spare.ended == ""
    assert run.judge is not None and run.judge.worker is spare  # the judge's clock binds the kept worker
    assert run._spare is None and len(_Worker.made) == 2  # the last try: no spare ahead of it


def test_taking_the_spare_starts_the_next_while_tries_remain(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.91)], tries=3)
    first, spare, ahead = _Worker.made
    assert first.ended == "closed" and run._worker is spare and spare.ended == ""
    assert ahead.sent == [] and ahead.ended == "killed"  # the spare matched: the one ahead is not needed
    assert run._spare is None


def test_a_matched_worker_keeps_its_place_and_the_spare_is_killed(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 1.92)], tries=3)
    first, spare = _Worker.made
    assert run._worker is first and first.ended == ""
    assert spare.ended == "killed" and run._spare is None


def test_each_replacement_was_started_ahead_of_its_turn(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 2.07), (1.90, 2.09), (1.90, 2.06)], tries=3)
    first, spare, third, fourth = _Worker.made  # the third started as the spare was taken, the fourth as the third was
    assert first.ended == spare.ended == third.ended == "closed"
    assert third.sent == fourth.sent == ["start"]  # each asked to open the device once taken, not beside a reading
    assert run._worker is fourth and fourth.ended == "" and run._spare is None
    assert run.judge is not None and run.judge.worker is fourth


def test_a_spare_started_beside_a_reading_opens_no_device_until_taken(monkeypatch):
    spare_asked_while_read: list[list[str] | None] = []

    class _Reading(_Judge):
        def later_launch_us(self, case: Case, references: Any) -> dict[str, float]:
            spare_asked_while_read.append(None if run._spare is None else list(run._spare.sent))  # type: ignore[attr-defined]
            return super().later_launch_us(case, references)

    run = _with_spare(monkeypatch, [], tries=3, timed=False)  # a run made, not yet matched
    _Worker.made, run._worker, run.timed = [], None, True
    run.judge = _Reading([(1.90, 2.08), (1.90, 2.07), (1.90, 1.91)])  # type: ignore[assignment]
    run._start_worker("cuda")
    run._start_spare("cuda")
    run._match_worker(Case(name="main", dims={}, dtype="float32", seed=0, timed=True), [], "cuda")
    # The first spare, started beside the setup, opens its device at once; the ones started beside
    # a reading only once taken.
    assert spare_asked_while_read == [["start"], [], []]
    third, fourth = _Worker.made[2:]
    assert run._worker is third and third.sent == ["start"] and fourth.sent == []


def test_the_nearest_kept_is_the_worker_the_judges_clock_binds(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.96), (1.90, 2.10), (1.90, 2.09)], tries=3)
    first, spare, third, fourth = _Worker.made
    assert run._worker is spare and spare.ended == ""
    assert first.ended == third.ended == fourth.ended == "closed"
    assert run.judge is not None and run.judge.worker is spare


def test_without_a_spare_a_replacement_is_a_fresh_start(monkeypatch):
    run = _with_spare(monkeypatch, [(1.90, 2.08), (1.90, 1.93)], tries=1)
    run._spare = None
    run._replace_worker("cuda", another=False)
    first, spare, fresh = _Worker.made
    assert spare.ended == "closed" and fresh.sent == ["start"] and run._worker is fresh


def test_no_spare_unless_matching_is_asked_for_a_timed_run(monkeypatch):
    _with_spare(monkeypatch, [(1.90, 1.90)], tries=0)
    assert len(_Worker.made) == 1
    _with_spare(monkeypatch, [], tries=2, timed=False)
    assert len(_Worker.made) == 1


def test_the_judge_binds_its_clock_to_the_kept_worker():
    from types import SimpleNamespace

    from arena.harness.judged_timing import Judge

    judge = Judge.__new__(Judge)  # no GPU: only the binding
    first, fresh = _Worker(), _Worker()
    judge.worker, judge.clock = first, SimpleNamespace(worker=first)  # type: ignore[assignment]
    judge.use_worker(fresh)  # type: ignore[arg-type]
    assert judge.worker is fresh and judge.clock.worker is fresh
