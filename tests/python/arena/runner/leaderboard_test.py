from __future__ import annotations

import math

import pytest

from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.leaderboard import Submission, rank_submissions
from arena.scoring.records import Score


def evaluation(compiled: bool, correct: bool, speedup: float, points: float) -> Evaluation:
    status = Status.PASSED if correct else (Status.INCORRECT if compiled else Status.COMPILE_ERROR)
    score = Score(points=points, speedup=speedup, geomean_speedup=speedup)
    return Evaluation("e", "t", "td", "cd", status, compiled, correct, score=score)


def test_rows_per_agent_and_category_from_the_latest_submission_per_task() -> None:
    rows = rank_submissions(
        [
            Submission("a", "triton2triton", "t1", evaluation(True, True, 9.0, 1020)),  # replaced below
            Submission("a", "triton2triton", "t1", evaluation(True, True, 2.0, 320)),
            Submission("a", "triton2triton", "t2", evaluation(True, True, 8.0, 920)),
            Submission("a", "triton2triton", "t3", evaluation(True, False, 0.0, 20)),
            Submission("a", "triton2triton", "t4", evaluation(False, False, 0.0, 0)),
            Submission("b", "triton2triton", "t1", evaluation(True, True, 1.0, 220)),
            Submission("b", "hip2hip", "h1", evaluation(True, True, 3.0, 420)),
        ]
    )
    assert [(row.category, row.agent) for row in rows] == [
        ("hip2hip", "b"),
        ("triton2triton", "a"),
        ("triton2triton", "b"),
    ]
    a = rows[1]
    assert a.tasks == 4 and a.compile_rate == 0.75 and a.correct_rate == 0.5
    assert a.mean_speedup == 5.0 and a.geomean_speedup == pytest.approx(4.0)
    assert a.mean_score == pytest.approx((320 + 920 + 20 + 0) / 4)


def test_no_correct_evaluation_gives_zero_speedups() -> None:
    (row,) = rank_submissions([Submission("a", "hip2hip", "h", evaluation(True, False, 0.0, 20))])
    assert row.mean_speedup == 0.0 and row.geomean_speedup == 0.0 and not math.isnan(row.mean_score)
