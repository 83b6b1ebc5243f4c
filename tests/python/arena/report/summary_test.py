"""Figures per set and category: repeated runs count once, cost and tokens only where recorded."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from arena.evaluation.evaluation import Evaluation, Status
from arena.report.runs import AgentRecord, ResultSet, Run
from arena.report.summary import sol_range, speedup_interval, summarize_category, summarize_set
from arena.scoring.records import CaseResult, Score


def _run(task: str, speedup: float, *, correct: bool = True, category: str = "triton2triton",
         agent: AgentRecord | None = None) -> Run:  # fmt: skip
    points = 120.0 + 100 * speedup if correct else 20.0
    evaluation = Evaluation(
        id=f"{task}{speedup}", task=task, task_digest="d", candidate_digest="c",
        status=Status.PASSED if correct else Status.INCORRECT, compiled=True, correct=correct,
        score=Score(points=points, speedup=speedup, geomean_speedup=speedup if correct else 0.0),
    )  # fmt: skip
    return Run(evaluation, category, task, "test", agent=agent or AgentRecord())


def test_repeated_runs_of_a_task_count_once() -> None:
    runs = [_run("t0", 2.0), _run("t0", 8.0), _run("t1", 3.0, correct=False)]
    summary = summarize_category("agent", "triton2triton", runs)
    assert (summary.tasks, summary.runs, summary.correct_runs, summary.timed_runs) == (2, 3, 2, 2)
    # t0: geomean of its runs, 4.0; t1 incorrect: the baseline stands, 1.0; over tasks: 2.0.
    assert summary.geomean_speedup == pytest.approx(2.0)
    # fast_2.0: t0 one of its two runs (8.0; 2.0 is not above 2.0), t1 none: (0.5 + 0) / 2.
    assert summary.fast_p["2.0"] == pytest.approx(0.25) and summary.fast_p["1.0"] == pytest.approx(0.5)
    # Points: t0 the mean of 320 and 920, t1 20 (compiled only).
    assert summary.points == pytest.approx(620.0 + 20.0)


def test_cost_and_tokens_are_summed_where_recorded_and_absent_otherwise() -> None:
    recorded = AgentRecord(cost_usd=0.25, input_tokens=1000, output_tokens=500)
    runs = [_run("t0", 2.0, agent=recorded), _run("t1", 1.5, agent=AgentRecord(cost_usd=0.5)), _run("t2", 1.0)]
    summary = summarize_category("agent", "triton2triton", runs)
    assert (summary.cost_usd, summary.cost_runs, summary.tokens, summary.token_runs) == (0.75, 2, 1500, 1)
    nothing = summarize_category("agent", "triton2triton", [_run("t0", 2.0)])
    assert nothing.cost_usd is None and nothing.tokens is None


def test_a_set_is_summarized_per_category() -> None:
    result = ResultSet("agent", (_run("a", 2.0), _run("b", 4.0, category="hip2hip"), _run("c", 8.0)))
    summaries = summarize_set(result)
    assert [(s.category, s.tasks) for s in summaries] == [("triton2triton", 2), ("hip2hip", 1)]
    assert summaries[0].geomean_speedup == pytest.approx(4.0)


def test_nothing_timed_gives_no_speedup() -> None:
    summary = summarize_category("agent", "triton2triton", [_run("t0", 0.0)])
    assert summary.timed_runs == 0 and summary.geomean_speedup == 1.0  # untimed: the baseline stands


def _case(name: str, speedup: float, low: float, high: float, weight: float = 1.0, sol: float = 0.0) -> CaseResult:
    return CaseResult(name, True, True, weight=weight, speedup=speedup, speedup_ci_low=low, speedup_ci_high=high,
                      sol_fraction=sol)  # fmt: skip


def test_the_task_interval_combines_the_case_intervals_as_the_speedups_are(scored) -> None:  # type: ignore[no-untyped-def]
    one = scored("t", 2.0, seed=1)
    [case] = one.cases
    assert speedup_interval(one) == pytest.approx((case.speedup_ci_low, case.speedup_ci_high))
    assert case.speedup_ci_low < 2.0 < case.speedup_ci_high
    two = replace(one, cases=(_case("a", 2.0, 1.8, 2.2, weight=1.0), _case("b", 8.0, 7.2, 8.8, weight=3.0)))
    low, high = speedup_interval(two)
    assert low == pytest.approx(math.exp((math.log(1.8) + 3 * math.log(7.2)) / 4))
    assert high == pytest.approx(math.exp((math.log(2.2) + 3 * math.log(8.8)) / 4))
    assert speedup_interval(replace(one, cases=())) == (0.0, 0.0)


def test_speed_of_light_is_shown_as_the_range_over_cases_that_have_it(scored) -> None:  # type: ignore[no-untyped-def]
    evaluation = replace(
        scored("t", 2.0, seed=1),
        cases=(_case("a", 2, 1, 3, sol=0.4), _case("b", 2, 1, 3, sol=0.7), _case("c", 2, 1, 3)),
    )
    assert sol_range(evaluation) == (0.4, 0.7)
    assert sol_range(replace(evaluation, cases=(_case("c", 2, 1, 3),))) == (0.0, 0.0)
