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


def test_rows_per_agent_and_category_average_every_closed_attempt_per_task() -> None:
    rows = rank_submissions(
        [
            Submission("a", "triton2triton", "t1", evaluation(True, True, 9.0, 1020)),
            Submission("a", "triton2triton", "t1", evaluation(True, True, 1.0, 220)),  # t1: mean of both
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
    # t1's speedup is the mean of its two correct attempts (5.0), t2's is 8.0.
    assert a.mean_speedup == 6.5 and a.geomean_speedup == pytest.approx(math.sqrt(3.0 * 8.0))
    assert a.mean_score == pytest.approx(((1020 + 220) / 2 + 920 + 20 + 0) / 4)


def test_retrying_cannot_raise_a_rank() -> None:
    """Noisy re-measurements of one kernel: keeping the latest or the best would reward retrying;
    the mean over every closed attempt does not, and an attempt left unsubmitted counts as nothing."""
    steady = [Submission("steady", "c", "t", evaluation(True, True, 2.0, 320))]
    noisy = [2.0, 1.5, 2.5]  # one kernel, measured three times; only the last (or best) would look good
    retrier = [Submission("retrier", "c", "t", evaluation(True, True, s, 120 + 100 * s)) for s in noisy]
    dropper = [Submission("dropper", "c", "t", None), Submission("dropper", "c", "t", evaluation(True, True, 2.5, 370))]
    rows = {row.agent: row for row in rank_submissions(steady + retrier + dropper)}
    assert rows["retrier"].mean_score == pytest.approx(rows["steady"].mean_score)
    assert rows["retrier"].mean_speedup == pytest.approx(2.0)
    # The attempt whose deadline passed without a submission counts: not compiled, not correct, 0 points.
    assert rows["dropper"].mean_score == pytest.approx(370 / 2)
    assert rows["dropper"].mean_score < rows["steady"].mean_score
    assert rows["dropper"].compile_rate == 0.5 and rows["dropper"].correct_rate == 0.5


def test_no_correct_evaluation_gives_zero_speedups() -> None:
    (row,) = rank_submissions([Submission("a", "hip2hip", "h", evaluation(True, False, 0.0, 20))])
    assert row.mean_speedup == 0.0 and row.geomean_speedup == 0.0 and not math.isnan(row.mean_score)


def test_an_unchecked_submission_is_counted_as_unchecked_not_as_incorrect() -> None:
    unchecked = Evaluation("e", "t", "td", "cd", Status.NEEDS_DEVICE, True, False, score=Score(points=20))
    (row,) = rank_submissions(
        [
            Submission("a", "hip2hip", "h1", unchecked),
            Submission("a", "hip2hip", "h2", evaluation(True, False, 0.0, 20)),  # a wrong answer
        ]
    )
    assert row.unchecked_rate == 0.5 and row.correct_rate == 0.0 and row.compile_rate == 1.0
