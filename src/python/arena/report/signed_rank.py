"""The Wilcoxon signed-rank test, in plain Python: is the median of paired differences zero?

Zero differences drop out (Wilcoxon's own treatment); tied magnitudes share their average rank.
Up to EXACT_UP_TO differences the p-value is exact: under the null hypothesis every pattern of
signs over the observed ranks is equally likely, so W+ is counted over all 2^n patterns (ranks
doubled, so that half ranks from ties stay whole numbers). Beyond that, the normal approximation
with the tie correction of the variance and a continuity correction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

EXACT_UP_TO = 50  # 2^50 patterns, counted by rank sums: about n^3 steps, instant at this size


@dataclass(frozen=True)
class SignedRankTest:
    n: int  # non-zero differences the test used
    statistic: float  # W+: the sum of the ranks of the positive differences
    p_value: float  # two-sided; 1.0 when no difference is non-zero
    method: str  # exact | normal | none (nothing to test)


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of `values`, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda index: values[index])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def signed_rank_test(differences: Sequence[float]) -> SignedRankTest:
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return SignedRankTest(n=0, statistic=0.0, p_value=1.0, method="none")
    ranks = average_ranks([abs(d) for d in nonzero])
    w_plus = sum(rank for rank, d in zip(ranks, nonzero) if d > 0)
    if len(nonzero) <= EXACT_UP_TO:
        return SignedRankTest(len(nonzero), w_plus, exact_p_value(ranks, w_plus), "exact")
    return SignedRankTest(len(nonzero), w_plus, normal_p_value(ranks, w_plus), "normal")


def exact_p_value(ranks: Sequence[float], w_plus: float) -> float:
    """Two-sided: twice the smaller tail of W+ over every sign pattern, at most 1."""
    doubled = [round(2 * rank) for rank in ranks]
    total = sum(doubled)
    counts = [1] + [0] * total  # counts[s]: sign patterns whose doubled W+ is s
    for rank in doubled:
        for s in range(total, rank - 1, -1):
            counts[s] += counts[s - rank]
    observed = round(2 * w_plus)
    tail = min(sum(counts[: observed + 1]), sum(counts[observed:]))
    return min(1.0, 2 * tail / 2 ** len(ranks))


def normal_p_value(ranks: Sequence[float], w_plus: float) -> float:
    """Two-sided, from the normal approximation (tie-corrected variance, continuity correction)."""
    n = len(ranks)
    mean = n * (n + 1) / 4
    ties = [ranks.count(rank) for rank in set(ranks)]
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in ties) / 48
    if variance <= 0:
        return 1.0
    z = max(abs(w_plus - mean) - 0.5, 0.0) / math.sqrt(variance)
    return math.erfc(z / math.sqrt(2))
