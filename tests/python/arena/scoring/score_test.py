import dataclasses
import math

import numpy as np
import pytest

from arena.harness.result import CaseOutcome, HarnessResult
from arena.scoring.records import CaseResult
from arena.scoring.score import (
    PENALTY_REWARD,
    review_flags,
    score_case,
    score_evaluation,
    sol_fraction,
)


def _samples(mean: float, seed: int, n: int = 100) -> tuple[float, ...]:
    return tuple(float(v) for v in np.random.default_rng(seed).normal(mean, mean * 0.005, n))


def _timed(name: str, speedup: float, within_noise: bool = False, weight: float = 1.0) -> CaseResult:
    return CaseResult(name=name, correct=True, timed=True, weight=weight, speedup=speedup, within_noise=within_noise)


def test_seed_formula_uses_the_mean_of_per_case_ratios() -> None:
    cases = [_timed("a", 1.0), _timed("b", 3.0), CaseResult("small", correct=True, timed=False)]
    score = score_evaluation(True, True, cases)
    assert score.speedup == pytest.approx(2.0)
    assert score.points == pytest.approx(20 + 100 + 200)
    assert score.geomean_speedup == pytest.approx(math.sqrt(3.0))
    assert score.reward == pytest.approx(math.log(math.sqrt(3.0)))
    assert score.fast_p == {"1.0": True, "1.2": True, "2.0": False}


def test_geomean_is_weighted() -> None:
    score = score_evaluation(True, True, [_timed("a", 2.0, weight=1.0), _timed("b", 8.0, weight=3.0)])
    assert score.geomean_speedup == pytest.approx(2**2.5)
    assert score.speedup == pytest.approx(5.0)  # the seed's mean ignores weights


def test_incorrect_gets_compile_points_only_and_the_penalty() -> None:
    score = score_evaluation(True, False, [_timed("a", 5.0)])
    assert score.points == 20.0
    assert score.reward == PENALTY_REWARD
    assert not any(score.fast_p.values())


def test_not_compiled_scores_nothing() -> None:
    score = score_evaluation(False, False, [])
    assert (score.points, score.speedup, score.reward) == (0.0, 0.0, PENALTY_REWARD)


def test_a_no_op_has_zero_reward_and_is_not_fast() -> None:
    score = score_evaluation(True, True, [_timed("a", 1.004, within_noise=True), _timed("b", 0.998, within_noise=True)])
    assert score.reward == 0.0
    assert score.points == pytest.approx(120 + 100 * 1.001)
    assert score.fast_p["1.0"] is False


def test_correct_but_untimed_scores_120_and_zero_reward() -> None:
    score = score_evaluation(True, True, [CaseResult("small", correct=True, timed=True)])
    assert (score.points, score.speedup, score.geomean_speedup, score.reward) == (120.0, 0.0, 0.0, 0.0)


def test_noise_floor_is_the_largest_case_floor() -> None:
    assert score_evaluation(True, True, [_timed("a", 2.0)], [0.01, 0.03]).noise_floor == 0.03


def test_sol_fraction_takes_the_larger_roofline_bound() -> None:
    env = {"peak_tflops": 1000.0, "peak_bandwidth_gbs": 4000.0}
    # 4e9 bytes at 4000 GB/s = 1 ms; 1e12 flops at 1000 TFLOP/s = 1 ms. Measured 2 ms -> 0.5.
    assert sol_fraction(0.0, 4e9, 2000.0, env) == pytest.approx(0.5)
    assert sol_fraction(2e12, 4e9, 2000.0, env) == pytest.approx(1.0)  # compute bound: 2 ms
    assert sol_fraction(0.0, 4e9, 2000.0, {}) == 0.0
    assert sol_fraction(0.0, 0.0, 2000.0, env) == 0.0


def test_score_case_from_raw_samples() -> None:
    outcome = CaseOutcome(
        name="big",
        correct=True,
        timed=True,
        weight=2.0,
        baseline_us=_samples(100.0, 1),
        candidate_us=_samples(40.0, 2),
        bytes=4e8,
    )
    result, floor = score_case(outcome, {"peak_bandwidth_gbs": 4000.0})
    assert result.speedup == pytest.approx(2.5, rel=0.01)
    assert result.speedup_ci_low < result.speedup < result.speedup_ci_high
    assert not result.within_noise
    assert result.baseline is not None and result.baseline.median_us == pytest.approx(100.0, rel=0.01)
    # Both sides' figures over the same kept pairs: the speedup is their means' ratio.
    assert result.candidate is not None and result.candidate.samples == result.baseline.samples >= 95
    assert result.speedup == pytest.approx(result.baseline.mean_us / result.candidate.mean_us)
    assert result.sol_fraction == pytest.approx(100e-6 / 40e-6, rel=0.01)  # 0.1 ms ideal / 0.04 ms
    assert result.weight == 2.0
    assert 0.0 < floor < 0.01
    assert score_case(outcome, {"peak_bandwidth_gbs": 4000.0}) == (result, floor)


def test_score_case_without_samples_is_untimed() -> None:
    result, floor = score_case(CaseOutcome(name="s", correct=False, timed=True, error="y[0]: 1 != 2"), {})
    assert (result.speedup, result.baseline, floor, result.error) == (0.0, None, 0.0, "y[0]: 1 != 2")


def test_review_flags() -> None:
    flags = review_flags(
        [
            _timed("fast", 12.0),
            _timed("ok", 2.0),
            CaseResult("sol", True, True, speedup=1.5, sol_fraction=0.95),
        ]
    )
    assert len(flags) == 2
    assert "'fast'" in flags[0] and "12.00x" in flags[0]
    assert "'sol'" in flags[1] and "0.95" in flags[1]


def test_a_cases_interval_is_over_its_chunk_pairs_once_the_child_says_how_many_calls_a_chunk() -> None:
    # 8 chunks of 25 calls, the side second 4% faster: each chunk pair cancels it exactly, so
    # over chunk pairs the interval is tight about 1.0, where calls resampled one by one spread.
    baseline = _samples(100.0, 3, 200)
    candidate = tuple(t * (0.96 if (i // 25) % 2 == 0 else 1.04) for i, t in enumerate(baseline))
    outcome = CaseOutcome(name="led", correct=True, timed=True, baseline_us=baseline, candidate_us=candidate)
    told = HarnessResult.from_json(
        HarnessResult("PASSED", True, True, cases=(dataclasses.replace(outcome, calls_a_chunk=25),)).to_json()
    ).cases[0]
    assert told.calls_a_chunk == 25
    by_calls, _ = score_case(outcome, {})
    by_pairs, _ = score_case(told, {})
    assert by_pairs.speedup == by_calls.speedup
    assert by_pairs.speedup_ci_low <= 1.0 <= by_pairs.speedup_ci_high
    assert 3 * (by_pairs.speedup_ci_high - by_pairs.speedup_ci_low) < by_calls.speedup_ci_high - by_calls.speedup_ci_low
