"""Robust statistics of per-call kernel times, and the aggregates built from them.

Raw samples are per-call device times in microseconds, in measurement order with the trials
concatenated (arena.harness.result.CaseOutcome). Every figure here is computed by the parent
from those samples; bootstraps are seeded so the same samples always give the same numbers.

A kernel's time on a case is the mean of its samples once 1.5 x IQR outliers are dropped, not their
median: outliers (a preempted call, a clock step) are gone either way, and where a kernel's times
fall in several humps the median jumps between them while the mean moves with their mix,
smoothly (bench/results/2026-12-01.md, session 10). The median is still reported.

Outliers are read by pairs (outliers.paired_kept): call k of each side ran on the same input set,
so a set whose work is larger is kept on both sides and a call that stalled drops its pair. A
case's figures are both sides' means over the kept pairs, and the speedup is their ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from arena.harness.outliers import drop_outliers, paired_kept, paired_mask
from arena.harness.student_t import t975

# Bootstrap resamples: 2000 keeps the 2.5/97.5 percentiles stable to ~1% of the interval.
RESAMPLES = 2000
LEVEL = 0.95
FAST_P = (1.0, 1.2, 2.0)
# How far a no-op's speedup strays from 1.00 from one pair of processes to the next: 120 of 124
# tasks within it on an H100, while each run's own interval read +-0.2-0.5% and the four outside
# moved by up to 2.6% between runs (bench/results/2026-12-06.md, session 37). A run cannot see
# it in its own samples, so no speedup closer to 1.00 than this is told apart from noise.
PROCESS_FLOOR = 0.005


@dataclass(frozen=True)
class Summary:
    """One kernel's times on one case after 1.5 x IQR outliers are dropped (microseconds)."""

    median_us: float
    mean_us: float
    min_us: float
    iqr_us: float
    sem_us: float  # standard error of the mean
    ci_low_us: float  # bootstrap interval of the mean at LEVEL
    ci_high_us: float
    samples: int  # kept after dropping outliers
    dropped: int  # outliers dropped


@dataclass(frozen=True)
class Comparison:
    """A candidate against the baseline on one case."""

    speedup: float  # baseline mean / candidate mean over the pairs kept (paired_kept)
    ci_low: float  # the ratio's 95% interval (chunk pairs, or pairs of calls resampled)
    ci_high: float
    noise_floor: float  # relative: how far the speedup moves within the run, PROCESS_FLOOR at least
    within_noise: bool  # the speedup cannot be told apart from 1.0


def _rng(seed: int, values: np.ndarray) -> np.random.Generator:
    # Seeded by the caller's seed and the data's size, so repeated calls are identical.
    return np.random.default_rng([seed, values.size])


def _percentile_interval(estimates: np.ndarray) -> tuple[float, float]:
    tail = (1.0 - LEVEL) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_means(values: np.ndarray, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """Means of `resamples` resamples (with replacement) of `values`."""
    picks = _rng(seed, values).integers(0, values.size, size=(resamples, values.size))
    return np.mean(values[picks], axis=1)


def summarize_samples(samples: Sequence[float], seed: int = 0) -> Summary:
    """Median, mean, min, IQR, SEM and a bootstrap interval of the mean, outliers dropped (one
    kernel's samples read alone)."""
    raw = np.asarray(samples, dtype=np.float64)
    if raw.size == 0:
        raise ValueError("no samples to summarize")
    kept = drop_outliers(raw)
    return summarize_kept(kept, raw.size - kept.size, seed)


def summarize_kept(kept: np.ndarray, dropped: int, seed: int = 0) -> Summary:
    """The Summary of samples whose outliers are already gone (`dropped` of them)."""
    if kept.size == 0:
        raise ValueError("no samples to summarize")
    q1, q3 = np.percentile(kept, [25, 75])
    sem = float(np.std(kept, ddof=1) / math.sqrt(kept.size)) if kept.size > 1 else 0.0
    low, high = _percentile_interval(bootstrap_means(kept, seed)) if kept.size > 1 else (kept[0],) * 2
    return Summary(
        median_us=float(np.median(kept)),
        mean_us=float(np.mean(kept)),
        min_us=float(np.min(kept)),
        iqr_us=float(q3 - q1),
        sem_us=sem,
        ci_low_us=float(low),
        ci_high_us=float(high),
        samples=int(kept.size),
        dropped=int(dropped),
    )


def _paired_ratios(base: np.ndarray, cand: np.ndarray, seed: int) -> np.ndarray:
    """sum(base) / sum(cand) over RESAMPLES resamples of the pairs, each pair kept whole: what
    moves both sides of a chunk alike (a clock step, a set's work) moves no ratio."""
    picks = _rng(seed, base).integers(0, base.size, size=(RESAMPLES, base.size))
    return np.sum(base[picks], axis=1) / np.sum(cand[picks], axis=1)


def measure_noise_floor(baseline: Sequence[float], candidate: Sequence[float], seed: int = 0) -> float:
    """How far the speedup moves within the run: the pairs kept (paired_kept), in the order
    measured, split into their first and second half (so drift between trials counts as noise,
    not only call-to-call jitter), and the bootstrap interval of the ratio of the halves'
    speedups; the floor is how far that interval reaches from 1.0.
    By pairs, not the baseline against itself: a drift of the clock that both sides of a chunk
    share moves no speedup, and neither do sets of unequal work (decode_attention's lengths
    drawn at random gave its baseline's halves floors of 8-46%, bench/results/2026-12-07.md,
    session 45)."""
    return _halves_floor(*paired_kept(baseline, candidate), seed)


def _halves_floor(base: np.ndarray, cand: np.ndarray, seed: int) -> float:
    """measure_noise_floor over the kept pairs `base`, `cand`."""
    if base.size < 4:
        return 0.0
    half = base.size // 2
    halves = _paired_ratios(base[:half], cand[:half], seed) / _paired_ratios(base[half:], cand[half:], seed + 1)
    low, high = _percentile_interval(halves)
    return float(max(high - 1.0, 1.0 - low, 0.0))


def chunk_pair_interval(
    baseline: Sequence[float], candidate: Sequence[float], calls_a_chunk: int
) -> tuple[float, float] | None:
    """The speedup's 95% interval over chunk pairs: the samples in chunks of `calls_a_chunk` calls,
    the baseline leading even chunks and the candidate odd ones (judged_timing.first_side), each
    pair's speedup over its kept calls (paired_mask), Student's t over the pairs, about the
    speedup over all kept calls. A chunk's calls share its clocks and whatever one side's going
    first does to it, so calls are not independent: resampled call by call the interval held
    1.0 for 24 of 41 no-op cases on an H100, over chunk pairs 36 (session 45). A chunk left over
    joins the last pair. None with fewer than two pairs."""
    base, cand = np.asarray(baseline, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    return _pairs_interval(base, cand, paired_mask(base, cand), calls_a_chunk)


def _pairs_interval(
    base: np.ndarray, cand: np.ndarray, keep: np.ndarray, calls_a_chunk: int
) -> tuple[float, float] | None:
    """chunk_pair_interval over every call `base`, `cand`, the pairs kept marked in `keep`."""
    unit = 2 * calls_a_chunk
    if calls_a_chunk < 1 or base.size < 2 * unit:
        return None
    edges = list(range(0, base.size - unit + 1, unit))[1:] + [base.size]
    ratios = []
    for low, high in zip([0, *edges[:-1]], edges):
        kept = keep[low:high]
        if kept.any():
            ratios.append(float(np.sum(base[low:high][kept]) / np.sum(cand[low:high][kept])))
    if len(ratios) < 2:
        return None
    speedup = float(np.sum(base[keep]) / np.sum(cand[keep]))
    half = t975(len(ratios) - 1) * float(np.std(ratios, ddof=1)) / math.sqrt(len(ratios))
    return speedup - half, speedup + half


def compare_samples(
    baseline: Sequence[float], candidate: Sequence[float], seed: int = 0, calls_a_chunk: int = 0
) -> Comparison:
    """Speedup of the candidate over the baseline on the pairs the score keeps (paired_kept), its
    interval (over chunk pairs where the chunks are known, chunk_pair_interval; else pairs of
    calls resampled), and whether it is noise: its interval holds 1.0, or it lies within the noise
    floor (how far the speedup moves within this run, or the spread between runs, PROCESS_FLOOR,
    whichever is larger)."""
    if len(baseline) == 0:
        raise ValueError("both baseline and candidate need samples")
    every = np.asarray(baseline, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    keep = paired_mask(*every)  # once: the speedup, its interval and the floor read the same pairs
    base, cand = every[0][keep], every[1][keep]
    speedup = float(np.sum(base) / np.sum(cand))
    interval = _pairs_interval(*every, keep, calls_a_chunk)
    if interval is None:
        interval = _percentile_interval(_paired_ratios(base, cand, seed)) if base.size > 1 else (speedup, speedup)
    low, high = interval
    floor = max(_halves_floor(base, cand, seed + 2), PROCESS_FLOOR)
    within = low <= 1.0 <= high or abs(speedup - 1.0) < floor
    return Comparison(speedup=speedup, ci_low=low, ci_high=high, noise_floor=floor, within_noise=within)


def weighted_geomean(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """exp(sum w log v / sum w); 0.0 when any value is 0 (a failed case), NaN when empty."""
    if not values:
        return float("nan")
    weights = [1.0] * len(values) if weights is None else list(weights)
    if len(weights) != len(values) or any(w <= 0 for w in weights):
        raise ValueError("weights must be positive, one per value")
    if any(v < 0 for v in values):
        raise ValueError("geometric mean of negative values")
    if any(v == 0 for v in values):
        return 0.0
    total = sum(weights)
    return math.exp(sum(w * math.log(v) for v, w in zip(values, weights)) / total)


@dataclass(frozen=True)
class TaskOutcome:
    """One task's result in a suite: its task-level speedup and whether it was correct."""

    task: str
    correct: bool
    speedup: float  # weighted geometric mean over its timed cases; 0 when not timed
    within_noise: bool = False  # every timed case indistinguishable from the baseline


@dataclass(frozen=True)
class SuiteSummary:
    tasks: int
    correct: int
    timed: int  # tasks correct and timed: the ones whose speedup is measured
    geomean_speedup: float  # over all tasks; an incorrect task counts as 1.0 (the baseline stands)
    fast_p: dict[str, float]  # "1.0" -> share of tasks correct with speedup > 1.0, ...


def fast_p(outcomes: Iterable[TaskOutcome], p: float) -> float:
    """Share of tasks that are correct and faster than p x the baseline beyond noise.

    Incorrect tasks count as failures; so do tasks whose speedup is within noise of 1.0, so that
    a no-op does not pass fast_1.0 half the time on jitter alone.
    """
    outcomes = list(outcomes)
    if not outcomes:
        return 0.0
    fast = [o for o in outcomes if o.correct and not o.within_noise and o.speedup > p]
    return len(fast) / len(outcomes)


def summarize_suite(outcomes: Sequence[TaskOutcome]) -> SuiteSummary:
    """Geomean and fast_p over a suite.

    An incorrect (or untimed) task contributes 1.0 to the geomean: its candidate is discarded and
    the baseline stands. It counts as a failure for every fast_p.
    """
    kept = [o.speedup if o.correct and o.speedup > 0 else 1.0 for o in outcomes]
    return SuiteSummary(
        tasks=len(outcomes),
        correct=sum(1 for o in outcomes if o.correct),
        timed=sum(1 for o in outcomes if o.correct and o.speedup > 0),
        geomean_speedup=weighted_geomean(kept) if kept else float("nan"),
        fast_p={f"{p:.1f}": fast_p(outcomes, p) for p in FAST_P},
    )
