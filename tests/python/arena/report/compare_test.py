"""The paired comparison on known cases: identical sets, a set 2x faster everywhere, ties decided by
each task's noise floor, and repeated runs."""

from __future__ import annotations

import pytest

from arena.evaluation.evaluation import Evaluation, Status
from arena.report.compare import A_FASTER, B_FASTER, TIE, bootstrap_ratio_interval, compare_sets
from arena.report.runs import ResultSet, Run
from arena.scoring.records import Score

# Task speedups of a plausible agent: some slower than the baseline, most faster, by various amounts.
SPEEDUPS = (0.8, 1.0, 1.1, 1.3, 1.5, 2.0, 2.5, 3.0, 4.0, 1.2, 0.9, 5.0)


def _task(index: int) -> str:
    return f"tasks/triton2triton/t{index}:t{index}"


def _set(name: str, runs: list[Run]) -> ResultSet:
    return ResultSet(name, tuple(runs))


def test_the_same_records_compared_with_themselves_give_exactly_one(make_run) -> None:  # type: ignore[no-untyped-def]
    runs = [make_run(_task(i), ratio, seed=i) for i, ratio in enumerate(SPEEDUPS)]
    comparison = compare_sets(_set("A", runs), _set("B", runs))
    assert comparison.ratio == pytest.approx(1.0)
    assert comparison.ratio_ci_low == pytest.approx(1.0) and comparison.ratio_ci_high == pytest.approx(1.0)
    assert (comparison.ties, comparison.a_faster, comparison.b_faster) == (len(SPEEDUPS), 0, 0)
    assert comparison.signed_rank.p_value == 1.0 and comparison.signed_rank.n == 0
    assert all(difference == 0 for difference in comparison.fast_p_difference.values())


def test_one_configuration_measured_twice_has_an_interval_containing_one(make_run) -> None:  # type: ignore[no-untyped-def]
    # Same candidates, fresh per-call samples each time, two repeated runs per task on each side.
    first = [make_run(_task(i), r, seed=100 * i + k) for i, r in enumerate(SPEEDUPS) for k in (1, 2)]
    second = [make_run(_task(i), r, seed=100 * i + k) for i, r in enumerate(SPEEDUPS) for k in (3, 4)]
    comparison = compare_sets(_set("monday", first), _set("tuesday", second))
    assert comparison.ratio_ci_low <= 1.0 <= comparison.ratio_ci_high
    assert comparison.ratio_ci_high / comparison.ratio_ci_low < 1.01  # 1% jitter, 120 samples per task and side
    assert comparison.ties >= len(SPEEDUPS) - 2  # within the noise floor, all or nearly all
    assert comparison.signed_rank.p_value > 0.05
    assert all(task.runs_a == 2 and task.runs_b == 2 for task in comparison.tasks)


def test_a_set_twice_as_fast_on_every_task_is_found_twice_as_fast_with_a_tight_interval(make_run) -> None:  # type: ignore[no-untyped-def]
    slow = [make_run(_task(i), r, seed=i) for i, r in enumerate(SPEEDUPS)]
    fast = [make_run(_task(i), 2 * r, seed=1000 + i) for i, r in enumerate(SPEEDUPS)]
    comparison = compare_sets(_set("A", slow), _set("B", fast))
    assert comparison.ratio == pytest.approx(2.0, rel=0.01)
    assert 1.97 < comparison.ratio_ci_low <= comparison.ratio <= comparison.ratio_ci_high < 2.03
    assert comparison.b_faster == len(SPEEDUPS) and comparison.ties == comparison.a_faster == 0
    # Every log ratio positive: the exact two-sided p of 12 pairs is 2 / 2^12.
    assert comparison.signed_rank.p_value == pytest.approx(2 / 2**12)
    # Swapped, the same interval inverted.
    swapped = compare_sets(_set("B", fast), _set("A", slow))
    assert swapped.ratio == pytest.approx(1 / comparison.ratio)
    assert swapped.a_faster == len(SPEEDUPS)


def _fixed(task: str, speedup: float, noise_floor: float, correct: bool = True) -> Run:
    """A run whose task speedup and noise floor are given outright."""
    evaluation = Evaluation(
        id=f"{task}-{speedup}", task=task, task_digest="d", candidate_digest=f"c{speedup}",
        status=Status.PASSED if correct else Status.INCORRECT, compiled=True, correct=correct,
        score=Score(points=120 + 100 * speedup, speedup=speedup, geomean_speedup=speedup, noise_floor=noise_floor),
    )  # fmt: skip
    return Run(evaluation, "triton2triton", task, "test")


@pytest.mark.parametrize(
    ("speedup_b", "floor", "verdict"),
    [
        (1.03, 0.05, TIE),  # 3% apart, the baseline strays 5% from itself: noise
        (1.03, 0.01, B_FASTER),  # the same 3% over a 1% floor
        (0.97, 0.01, A_FASTER),
        (1 / 1.049, 0.05, TIE),  # the floor holds both ways, in ratio terms
        (0.94, 0.05, A_FASTER),
    ],
)
def test_ties_are_decided_by_the_task_noise_floor(speedup_b: float, floor: float, verdict: str) -> None:
    a, b = _fixed(_task(0), 1.0, floor), _fixed(_task(0), speedup_b, 0.0)
    comparison = compare_sets(_set("A", [a]), _set("B", [b]))
    assert comparison.tasks[0].noise_floor == floor  # the larger of the two sides'
    assert comparison.tasks[0].verdict == verdict


def test_an_incorrect_run_counts_as_the_baseline_and_unshared_tasks_are_listed() -> None:
    a = [_fixed(_task(0), 1.5, 0.01), _fixed(_task(1), 2.0, 0.01), _fixed(_task(2), 1.2, 0.01)]
    b = [_fixed(_task(0), 3.0, 0.01, correct=False), _fixed(_task(1), 2.0, 0.01), _fixed(_task(3), 9.0, 0.01)]
    comparison = compare_sets(_set("A", a), _set("B", b))
    first = comparison.tasks[0]
    assert (first.speedup_b, first.ratio, first.verdict) == (1.0, pytest.approx(1 / 1.5), A_FASTER)
    assert comparison.only_a == (_task(2),) and comparison.only_b == (_task(3),)
    assert comparison.fast_p_a["1.0"] == 1.0 and comparison.fast_p_b["1.0"] == 0.5
    assert comparison.fast_p_difference["1.0"] == -0.5


def test_repeated_runs_enter_as_their_geomean() -> None:
    a = [_fixed(_task(0), 1.0, 0.0)]
    b = [_fixed(_task(0), 2.0, 0.0), _fixed(_task(0), 8.0, 0.0)]
    comparison = compare_sets(_set("A", a), _set("B", b))
    assert comparison.tasks[0].speedup_b == pytest.approx(4.0) and comparison.ratio == pytest.approx(4.0)
    assert comparison.tasks[0].runs_b == 2


def test_the_bootstrap_is_seeded_and_resamples_runs_within_a_task() -> None:
    import numpy as np

    log_a = [np.log(np.array([1.0, 1.0]))]
    log_b = [np.log(np.array([1.5, 2.5]))]
    first = bootstrap_ratio_interval(log_a, log_b, seed=3)
    assert first == bootstrap_ratio_interval(log_a, log_b, seed=3)
    # One task: only its runs vary, so the interval spans the two runs' spread and no further.
    assert 1.5 <= first[0] < first[1] <= 2.5
