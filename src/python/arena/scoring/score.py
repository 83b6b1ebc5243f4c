"""Turn the harness's raw case outcomes into per-case results and the task's Score.

The seed's formula is kept exactly, for comparability with the original arena: compiled = 20
points; correct on every case = 100 more; then 100 x speedup, where speedup is the plain mean of
the per-case ratios over the timed cases (speedup points only when correct, as the seed does).
Beside it: the weighted geometric mean, fast_p flags and an RL reward.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import replace
from typing import Mapping, Sequence

from arena.harness.outliers import paired_kept
from arena.harness.result import CaseOutcome
from arena.scoring.records import CaseResult, Score, Timing
from arena.scoring.stats import (
    FAST_P,
    Summary,
    compare_samples,
    summarize_kept,
    weighted_geomean,
)

POINTS_COMPILED = 20.0
POINTS_CORRECT = 100.0
POINTS_PER_SPEEDUP = 100.0
# Reward of an incorrect (or failed) candidate: below any correct one down to a 2.7x slowdown,
# so a policy never gains by breaking the kernel; log(1) = 0 marks a no-op.
PENALTY_REWARD = -1.0
# Beyond these a result is flagged for a person to review (an error line, not a failure).
REVIEW_SPEEDUP = 10.0
REVIEW_SOL_FRACTION = 0.9


def _timing(summary: Summary) -> Timing:
    return Timing(
        median_us=summary.median_us,
        mean_us=summary.mean_us,
        min_us=summary.min_us,
        iqr_us=summary.iqr_us,
        ci_low_us=summary.ci_low_us,
        ci_high_us=summary.ci_high_us,
        samples=summary.samples,
        sem_us=summary.sem_us,
    )


def sol_fraction(flops: float, bytes_moved: float, time_us: float, environment: Mapping[str, object]) -> float:
    """Speed-of-light fraction: the roofline time (compute or memory, whichever is larger) / measured.

    0.0 when the environment has no peaks, the case has no flops or bytes, or nothing was timed.
    """
    peak_tflops = float(environment.get("peak_tflops") or 0.0)  # type: ignore[arg-type]
    peak_gbs = float(environment.get("peak_bandwidth_gbs") or 0.0)  # type: ignore[arg-type]
    bounds = []
    if flops > 0 and peak_tflops > 0:
        bounds.append(flops / (peak_tflops * 1e12))
    if bytes_moved > 0 and peak_gbs > 0:
        bounds.append(bytes_moved / (peak_gbs * 1e9))
    if not bounds or time_us <= 0:
        return 0.0
    return max(bounds) / (time_us * 1e-6)


def _case_seed(name: str) -> int:
    # A fixed seed per case name: the same samples always give the same intervals.
    return zlib.crc32(name.encode())


def score_case(outcome: CaseOutcome, environment: Mapping[str, object]) -> tuple[CaseResult, float]:
    """One case's result and its noise floor (0.0 when the case was not timed)."""
    result = CaseResult(
        name=outcome.name,
        correct=outcome.correct,
        timed=outcome.timed,
        weight=outcome.weight,
        error=outcome.error,
        hidden=outcome.hidden,
    )
    if not (outcome.timed and outcome.baseline_us and outcome.candidate_us):
        return result, 0.0
    seed = _case_seed(outcome.name)
    # Both sides' figures over the pairs the speedup keeps, so that it is their ratio.
    kept = paired_kept(outcome.baseline_us, outcome.candidate_us)
    dropped = len(outcome.baseline_us) - kept[0].size
    baseline = summarize_kept(kept[0], dropped, seed)
    candidate = summarize_kept(kept[1], dropped, seed + 1)
    comparison = compare_samples(outcome.baseline_us, outcome.candidate_us, seed + 2, outcome.calls_a_chunk)
    timed = replace(
        result,
        baseline=_timing(baseline),
        candidate=_timing(candidate),
        speedup=comparison.speedup,
        speedup_ci_low=comparison.ci_low,
        speedup_ci_high=comparison.ci_high,
        within_noise=comparison.within_noise,
        sol_fraction=sol_fraction(outcome.flops, outcome.bytes, candidate.mean_us, environment),
    )
    return timed, comparison.noise_floor


def review_flags(cases: Sequence[CaseResult]) -> tuple[str, ...]:
    """One line per case whose figures are too good to trust without a look."""
    flags = []
    for case in cases:
        if case.speedup > REVIEW_SPEEDUP:
            flags.append(f"review: case {case.name!r} speedup {case.speedup:.2f}x exceeds {REVIEW_SPEEDUP:g}x")
        if case.sol_fraction > REVIEW_SOL_FRACTION:
            flags.append(
                f"review: case {case.name!r} runs at {case.sol_fraction:.2f} of speed of light "
                f"(above {REVIEW_SOL_FRACTION:g})"
            )
    return tuple(flags)


def score_evaluation(
    compiled: bool, correct: bool, cases: Sequence[CaseResult], noise_floors: Sequence[float] = ()
) -> Score:
    """The Score from the per-case results; speed figures only from cases that were timed."""
    timed = [case for case in cases if case.timed and case.speedup > 0]
    speedup = sum(case.speedup for case in timed) / len(timed) if timed else 0.0
    geomean = weighted_geomean([c.speedup for c in timed], [c.weight for c in timed]) if timed else 0.0
    no_op = bool(timed) and all(case.within_noise for case in timed)
    points = (POINTS_COMPILED if compiled else 0.0) + (POINTS_CORRECT if compiled and correct else 0.0)
    if compiled and correct:
        points += POINTS_PER_SPEEDUP * speedup
    if not (compiled and correct):
        reward = PENALTY_REWARD
    elif not timed or no_op:
        reward = 0.0  # nothing measured, or nothing distinguishable from the baseline
    else:
        reward = math.log(geomean)
    return Score(
        points=points,
        speedup=speedup,
        geomean_speedup=geomean,
        reward=reward,
        # A task is fast_p when correct, faster than p and not within noise of the baseline.
        fast_p={f"{p:.1f}": bool(compiled and correct and timed and not no_op and geomean > p) for p in FAST_P},
        noise_floor=max(noise_floors, default=0.0),
    )
