"""The one outlier rule: the score's (scoring/stats.py) and the judge's bound (bound.claim) keep
the same calls, so no sample the score ignores can satisfy the bound."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _inside_fences(values: np.ndarray) -> np.ndarray:
    """Which values lie inside [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (all of them below 4 values)."""
    if values.size < 4:
        return np.ones(values.shape, dtype=bool)
    q1, q3 = np.percentile(values, [25, 75])
    spread = 1.5 * (q3 - q1)
    return (values >= q1 - spread) & (values <= q3 + spread)


def drop_outliers(samples: Sequence[float] | np.ndarray) -> np.ndarray:
    """The samples inside [Q1 - 1.5 IQR, Q3 + 1.5 IQR], in their original order: one kernel's
    samples read alone (the report's per-kernel figures where no pair exists)."""
    values = np.asarray(samples, dtype=np.float64)
    return values[_inside_fences(values)]


def paired_kept(baseline: Sequence[float], candidate: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The calls the score keeps (paired_mask), each side's in their original order."""
    keep = paired_mask(baseline, candidate)
    return np.asarray(baseline, dtype=np.float64)[keep], np.asarray(candidate, dtype=np.float64)[keep]


def paired_mask(baseline: Sequence[float], candidate: Sequence[float]) -> np.ndarray:
    """Which calls the score keeps. Call k of each side ran on
    the same input set (the judge stages a chunk's sets for both), and a pair is dropped when its
    candidate-over-baseline time (in logs) is outside the 1.5 IQR fences of those ratios and one of
    its calls outside its own side's fences: a stalled call is both. A heavy set (its work drawn
    at random: decode_attention's lengths, a router's counts) is an outlier of each side but not of
    their ratio, and is kept; read side by side it was dropped from a mean that must explain the
    judge's clock (bench/results/2026-12-07.md, session 45). Times in humps, one side's hump
    against the other's (the histogram's counters, where they lie), are outliers of the ratio but
    of neither side, and are kept too."""
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if base.shape != cand.shape or base.ndim != 1:
        raise ValueError(
            f"paired samples need as many calls a side: the baseline has {base.size}, the candidate {cand.size}"
        )
    tiny = np.finfo(np.float64).tiny
    ratio = _inside_fences(np.log(np.maximum(cand, tiny)) - np.log(np.maximum(base, tiny)))
    return ratio | (_inside_fences(base) & _inside_fences(cand))
