"""Matching the worker's launch kind to the judge's (run.Run._match_worker) on the CPU: the loop
over fresh workers with a judge whose readings are given. The readings themselves, on a GPU:
gpu_test.py's test_the_worker_is_matched_to_the_judges_launch_kind_when_asked."""

import time
from typing import Any

import pytest

from arena.harness.judged_timing import KIND_MATCH_US
from arena.harness.run import Run
from arena.harness.settings import MAX_MATCH_LAUNCHES, HarnessSettings
from arena.task.task import Case


class _Judge:
    """Reads each worker's later launch from a list, as Judge.later_launch_us would on a GPU."""

    def __init__(self, readings: list[tuple[float, float]]) -> None:
        self.readings = iter(readings)

    def later_launch_us(self, case: Case, references: Any) -> dict[str, float]:
        judge, worker = next(self.readings)
        return {"judge": judge, "worker": worker}


def _matched(readings: list[tuple[float, float]], tries: int) -> tuple[list[str], list[str]]:
    """(the backends each fresh worker was started with, the setup's marks)."""
    run = Run.__new__(Run)  # the loop only: no job, no device, no worker process
    run.settings = HarnessSettings(match_launches=tries)
    run._marks, run._stage_start = [], time.perf_counter()
    run.judge = _Judge(readings)  # type: ignore[assignment]
    started: list[str] = []
    run._replace_worker = started.append  # type: ignore[method-assign,assignment]
    run._match_worker(Case(name="main", dims={}, dtype="float32", seed=0, timed=True), [], "cuda")
    return started, run._marks


def test_a_worker_of_the_judges_kind_is_kept():
    started, marks = _matched([(1.90, 1.90 + KIND_MATCH_US * 0.8)], tries=2)
    assert started == []
    assert marks[-1].endswith("a later launch (us), worker by worker: judge 1.900, worker 1.940")


def test_fresh_workers_until_one_is_the_judges_kind():
    started, marks = _matched([(1.90, 2.08), (1.91, 2.06), (1.90, 1.92), (1.90, 2.10)], tries=3)
    assert started == ["cuda", "cuda"]  # the third worker matched: the fourth reading is never taken
    assert marks[-1].count("judge ") == 3 and "judge 1.900, worker 1.920" in marks[-1]


def test_no_more_workers_than_asked_and_the_last_one_stays():
    started, marks = _matched([(1.90, 2.08), (1.90, 2.09), (1.90, 2.07)], tries=2)
    assert started == ["cuda", "cuda"]
    assert marks[-1].count("judge ") == 3 and marks[-1].endswith("judge 1.900, worker 2.070")


def test_a_slower_worker_is_as_far_from_the_judge_as_a_faster_one():
    started, _ = _matched([(2.08, 1.90), (2.08, 2.07)], tries=1)
    assert started == ["cuda"]


def test_settings_bound_the_fresh_workers():
    assert HarnessSettings(match_launches=MAX_MATCH_LAUNCHES).match_launches == MAX_MATCH_LAUNCHES
    for wrong in (-1, MAX_MATCH_LAUNCHES + 1):
        with pytest.raises(ValueError, match=f"match_launches {wrong}"):
            HarnessSettings(match_launches=wrong)
