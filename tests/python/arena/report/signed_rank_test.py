"""The signed-rank test against brute force over every sign pattern, and a published example."""

from __future__ import annotations

import itertools
import math

import pytest

from arena.report.signed_rank import average_ranks, exact_p_value, normal_p_value, signed_rank_test

# Darwin's paired plant heights (cross- minus self-fertilised, eighths of an inch), the example of
# scipy.stats.wilcoxon's documentation: W+ = 96 of 120, so W- = 24, and exact two-sided p = 0.04126.
DARWIN = (6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75)


def brute_force_p(ranks: list[float], w_plus: float) -> float:
    """Two-sided p by listing all 2^n sign patterns."""
    sums = [
        sum(r for r, positive in zip(ranks, signs) if positive)
        for signs in itertools.product((0, 1), repeat=len(ranks))
    ]
    lower = sum(1 for s in sums if s <= w_plus + 1e-9)
    upper = sum(1 for s in sums if s >= w_plus - 1e-9)
    return min(1.0, 2 * min(lower, upper) / len(sums))


def test_average_ranks_share_ties() -> None:
    assert average_ranks([3.0, 1.0, 2.0, 2.0]) == [4.0, 1.0, 2.5, 2.5]
    assert average_ranks([5.0, 5.0, 5.0]) == [2.0, 2.0, 2.0]


def test_darwins_plants() -> None:
    test = signed_rank_test(DARWIN)
    assert (test.n, test.statistic, test.method) == (15, 96.0, "exact")
    assert test.p_value == pytest.approx(0.041259765625)
    assert test.p_value == pytest.approx(brute_force_p(average_ranks([abs(d) for d in DARWIN]), 96.0))


@pytest.mark.parametrize(
    "differences",
    [
        (0.3, -0.1, 0.2, 0.5, -0.4, 0.6),
        (0.1, 0.1, -0.1, 0.2, 0.2, -0.3, 0.4, 0.4, 0.4, -0.5),  # tied magnitudes: half ranks
        (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0),  # all one way
    ],
)
def test_exact_p_matches_brute_force(differences: tuple[float, ...]) -> None:
    test = signed_rank_test(differences)
    ranks = average_ranks([abs(d) for d in differences])
    assert test.p_value == pytest.approx(brute_force_p(ranks, test.statistic))


def test_zero_differences_drop_out() -> None:
    assert signed_rank_test([0.0, 0.0]).p_value == 1.0 and signed_rank_test([0.0, 0.0]).method == "none"
    with_zero = signed_rank_test([0.0, 0.3, -0.1, 0.2])
    assert with_zero.n == 3 and with_zero.p_value == signed_rank_test([0.3, -0.1, 0.2]).p_value


def test_the_normal_approximation_is_close_to_the_exact_p_where_both_apply() -> None:
    differences = [((-1) ** (i * 7 % 3)) * (i + 1) * 0.01 for i in range(40)]
    ranks = average_ranks([abs(d) for d in differences])
    w_plus = sum(r for r, d in zip(ranks, differences) if d > 0)
    exact, normal = exact_p_value(ranks, w_plus), normal_p_value(ranks, w_plus)
    assert 0.001 < exact < 1.0
    assert math.isclose(exact, normal, rel_tol=0.05, abs_tol=0.005)
