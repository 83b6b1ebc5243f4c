"""Student's t at 97.5% by degrees of freedom: the two-sided 95% interval over chunks, for the
judge's stopping rule (judged_timing.ratio_width) and the score's interval (scoring/stats.py)."""

from __future__ import annotations

_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 15: 2.131, 19: 2.093, 20: 2.086, 29: 2.045, 30: 2.042, 60: 2.000, 120: 1.980,
}  # fmt: skip


def t975(df: int) -> float:
    """t at 97.5% for `df` >= 1 degrees of freedom: the table's entry at the largest df not above
    it (never narrower than the truth)."""
    if df < 1:
        raise ValueError(f"Student's t needs a degree of freedom, not {df}")
    return _T975[max(known for known in _T975 if known <= df)]
