import math

import numpy as np
import pytest

from arena.scoring.stats import (
    PROCESS_FLOOR,
    TaskOutcome,
    chunk_pair_interval,
    compare_samples,
    drop_outliers,
    fast_p,
    measure_noise_floor,
    summarize_samples,
    summarize_suite,
    weighted_geomean,
)


def _normal(mean: float, std: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, std, n))


def test_drop_outliers_removes_far_points_and_keeps_order() -> None:
    samples = [10.0, 11.0, 9.0, 10.5, 500.0, 10.2, 9.8, 0.01]
    kept = drop_outliers(samples)
    assert list(kept) == [10.0, 11.0, 9.0, 10.5, 10.2, 9.8]


def test_summary_of_known_samples() -> None:
    summary = summarize_samples([float(v) for v in range(1, 10)] + [1000.0])
    assert summary.dropped == 1 and summary.samples == 9
    assert summary.median_us == 5.0
    assert summary.mean_us == 5.0
    assert summary.min_us == 1.0
    assert summary.iqr_us == 4.0  # numpy's linear percentiles of 1..9: 3 and 7
    assert summary.sem_us == pytest.approx(math.sqrt(7.5) / 3)
    assert 1.0 < summary.ci_low_us < 5.0 < summary.ci_high_us < 9.0


def test_summary_is_deterministic_and_seeded() -> None:
    samples = _normal(100.0, 5.0, 300, seed=1)
    assert summarize_samples(samples, seed=3) == summarize_samples(samples, seed=3)
    assert summarize_samples(samples, seed=3).ci_low_us != summarize_samples(samples, seed=4).ci_low_us


def test_the_interval_covers_the_true_mean_about_as_often_as_it_says_and_narrows_with_n() -> None:
    covered = 0
    for seed in range(60):
        summary = summarize_samples(_normal(100.0, 5.0, 200, seed=seed), seed=seed)
        covered += summary.ci_low_us < 100.0 < summary.ci_high_us
    assert 50 <= covered <= 60  # 95% nominal: 57 expected
    small = summarize_samples(_normal(100.0, 5.0, 50, seed=2))
    large = summarize_samples(_normal(100.0, 5.0, 2000, seed=2))
    assert large.ci_high_us - large.ci_low_us < (small.ci_high_us - small.ci_low_us) / 3


def test_single_sample() -> None:
    summary = summarize_samples([7.0])
    assert (summary.median_us, summary.ci_low_us, summary.ci_high_us, summary.sem_us) == (7.0, 7.0, 7.0, 0.0)
    with pytest.raises(ValueError):
        summarize_samples([])


def test_a_real_twofold_speedup_is_found_with_a_tight_interval() -> None:
    comparison = compare_samples(_normal(100.0, 1.0, 200, 1), _normal(50.0, 0.5, 200, 2))
    assert comparison.speedup == pytest.approx(2.0, rel=0.01)
    assert 1.97 < comparison.ci_low < comparison.speedup < comparison.ci_high < 2.03
    assert not comparison.within_noise


def test_a_no_op_is_within_noise() -> None:
    comparison = compare_samples(_normal(100.0, 2.0, 200, 3), _normal(100.0, 2.0, 200, 4))
    assert comparison.speedup == pytest.approx(1.0, abs=0.01)
    assert comparison.ci_low <= 1.0 <= comparison.ci_high
    assert comparison.within_noise


def test_a_kernel_whose_time_has_humps_is_read_by_its_mean_not_its_median() -> None:
    # As the histogram baseline on the H200: 220, 300 or 395 us a call by where its counters lie,
    # in each process apart. Both sides draw from the same humps in nearly the same mix; their
    # medians fall in different humps, and no pair's ratio is an outlier of the others.
    baseline = [220.0] * 49 + [300.0] * 2 + [395.0] * 49
    candidate = list(np.random.default_rng(7).permutation([220.0] * 51 + [395.0] * 49))
    assert np.median(baseline) / np.median(candidate) == pytest.approx(1.364, abs=0.001)
    comparison = compare_samples(baseline, candidate)
    assert comparison.speedup == pytest.approx(sum(baseline) / sum(candidate)) == pytest.approx(1.005, abs=0.001)
    assert comparison.ci_low <= 1.0 <= comparison.ci_high and comparison.within_noise
    assert summarize_samples(baseline).mean_us == pytest.approx(307.35)


def test_a_set_heavy_on_both_sides_is_kept_and_a_call_that_stalled_drops_its_pair() -> None:
    # About 1 set in 10 six times heavier (work drawn at random), the same sets on both sides.
    rng = np.random.default_rng(11)
    work = np.where(rng.random(200) < 0.1, 600.0, 100.0) + rng.normal(0.0, 0.5, 200)
    baseline, candidate = list(work), list(work / 1.2)
    candidate[17] *= 20  # one call of the candidate's stalled
    comparison = compare_samples(baseline, candidate)
    assert comparison.speedup == pytest.approx(1.2, abs=0.001)
    assert 1.19 < comparison.ci_low < 1.2 < comparison.ci_high < 1.21
    # Read side by side, each side's heavy sets were outliers and the mean was of the light ones.
    assert drop_outliers(baseline).size < 190
    # Pairs are read by their index: samples of different lengths are an error, not a guess.
    with pytest.raises(ValueError, match="as many calls a side"):
        compare_samples(baseline, candidate[:-1])


def test_noise_floor_grows_with_jitter_and_with_drift_between_trials() -> None:
    quiet = measure_noise_floor(_normal(100.0, 0.1, 400, 5), _normal(100.0, 0.1, 400, 15))
    noisy = measure_noise_floor(_normal(100.0, 10.0, 400, 5), _normal(100.0, 10.0, 400, 15))
    assert 0.0 < quiet < 0.003
    assert noisy > 10 * quiet
    # Two trials whose speedups are 5% apart: the floor reaches that far.
    baseline = _normal(100.0, 0.1, 400, 6)
    drifting = baseline[:200] + [value * 1.05 for value in baseline[200:]]
    assert measure_noise_floor(baseline, drifting) == pytest.approx(0.05, abs=0.005)


def test_a_drift_both_sides_share_and_sets_of_unequal_work_are_no_noise_of_the_speedup() -> None:
    # The clock 5% slower in the second trial on both sides of every chunk, and about 1 set in 10
    # six times heavier on both: read from the baseline alone, both were "noise" of 5% and more.
    rng = np.random.default_rng(12)
    work = np.where(rng.random(400) < 0.1, 600.0, 100.0) * np.repeat([1.0, 1.05], 200)
    baseline = list(work + rng.normal(0.0, 0.1, 400))
    candidate = list(work / 1.02 + rng.normal(0.0, 0.1, 400))
    assert measure_noise_floor(baseline, candidate) < 0.002
    comparison = compare_samples(baseline, candidate)
    assert comparison.speedup == pytest.approx(1.02, abs=0.001)
    assert comparison.noise_floor == PROCESS_FLOOR and not comparison.within_noise


def test_a_small_gain_inside_the_floor_is_noise() -> None:
    # The speedup moves 5% between the trials; a 2% gain is below the floor even though the
    # ratio's interval excludes 1.
    baseline = _normal(100.0, 0.1, 400, 8)
    candidate = [value / 1.045 for value in baseline[:200]] + [value / 1.045 * 1.05 for value in baseline[200:]]
    comparison = compare_samples(baseline, candidate)
    assert comparison.speedup == pytest.approx(1.02, abs=0.005) and comparison.ci_low > 1.0
    assert comparison.noise_floor == pytest.approx(0.05, abs=0.005)
    assert comparison.within_noise


def test_a_gain_closer_to_one_than_runs_differ_is_noise_however_tight_its_interval() -> None:
    baseline = _normal(100.0, 0.05, 400, 10)
    slight = compare_samples(baseline, [value / 1.004 for value in baseline])
    assert slight.ci_low > 1.0 and slight.noise_floor == PROCESS_FLOOR  # one run's floor is tighter
    assert slight.within_noise  # a no-op reads 1.004 in another pair of processes
    clear = compare_samples(baseline, [value / 1.01 for value in baseline])
    assert clear.ci_low > 1.0 and not clear.within_noise


def test_weighted_geomean() -> None:
    assert weighted_geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert weighted_geomean([2.0, 8.0], [1.0, 3.0]) == pytest.approx(2**2.5)
    assert weighted_geomean([2.0, 0.0]) == 0.0
    assert math.isnan(weighted_geomean([]))
    with pytest.raises(ValueError):
        weighted_geomean([1.0], [0.0])


def test_fast_p_counts_incorrect_and_noise_as_failures() -> None:
    outcomes = [
        TaskOutcome("a", correct=True, speedup=2.5),
        TaskOutcome("b", correct=True, speedup=1.3),
        TaskOutcome("c", correct=False, speedup=3.0),
        TaskOutcome("d", correct=True, speedup=1.01, within_noise=True),
    ]
    assert fast_p(outcomes, 1.0) == 0.5
    assert fast_p(outcomes, 1.2) == 0.5
    assert fast_p(outcomes, 2.0) == 0.25
    assert fast_p([], 1.0) == 0.0


def test_suite_summary_counts_an_incorrect_task_as_the_baseline() -> None:
    suite = summarize_suite([TaskOutcome("a", True, 4.0), TaskOutcome("b", False, 9.0), TaskOutcome("c", True, 1.0)])
    assert suite.tasks == 3 and suite.correct == 2 and suite.timed == 2
    assert suite.geomean_speedup == pytest.approx(4.0 ** (1 / 3))
    assert suite.fast_p == {
        "1.0": pytest.approx(1 / 3),
        "1.2": pytest.approx(1 / 3),
        "2.0": pytest.approx(1 / 3),
    }


def _led_chunks(chunks: int, calls: int, gain: float, seed: int) -> tuple[list[float], list[float]]:
    """A no-op in chunks of `calls` calls, the baseline leading even chunks: the side timed second
    `gain` faster, and each chunk's clock 1% off at random, on both sides alike."""
    rng = np.random.default_rng(seed)
    baseline: list[float] = []
    candidate: list[float] = []
    for chunk in range(chunks):
        clock = 1.0 + rng.normal(0.0, 0.01)
        second = "candidate" if chunk % 2 == 0 else "baseline"
        for _ in range(calls):
            work = 100.0 * clock * (1.0 + rng.normal(0.0, 0.001))
            baseline.append(work / (1 + gain) if second == "baseline" else work)
            candidate.append(work / (1 + gain) if second == "candidate" else work)
    return baseline, candidate


def test_the_interval_over_chunk_pairs_holds_a_no_op_that_calls_resampled_miss() -> None:
    # Seven chunks of 48 calls, the side second 5% faster: the baseline leads one chunk more than
    # the candidate, so the mean leans; calls resampled one by one take 336 calls as independent.
    baseline, candidate = _led_chunks(7, 48, 0.05, seed=21)
    by_calls = compare_samples(baseline, candidate)
    by_pairs = compare_samples(baseline, candidate, calls_a_chunk=48)
    assert by_pairs.speedup == by_calls.speedup
    assert not by_calls.ci_low <= 1.0 <= by_calls.ci_high
    assert by_pairs.ci_low <= 1.0 <= by_pairs.ci_high
    # A real 5% gain is still told apart over chunk pairs.
    gained = compare_samples(baseline, [t / 1.05 for t in candidate], calls_a_chunk=48)
    assert gained.ci_low > 1.0 and not gained.within_noise


def test_the_interval_over_chunk_pairs_needs_two_pairs() -> None:
    baseline, candidate = _led_chunks(3, 8, 0.0, seed=22)
    assert chunk_pair_interval(baseline, candidate, 8) is None  # one pair and a chunk left over
    assert chunk_pair_interval(baseline, candidate, 0) is None  # the chunks not known
    low, high = chunk_pair_interval(*_led_chunks(4, 8, 0.02, seed=22), 8) or (0.0, 0.0)
    assert low < 1.0 < high
