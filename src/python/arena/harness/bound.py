"""The bound: whether the worker's samples, as the score reads them, explain what the judge's chunk
clock saw of the candidate's work (docs/harness.md, "The bound"). Pure functions of figures the
judge has already taken (judged_timing.Judge.time_case), tested on the CPU at their margins."""

from __future__ import annotations

import math
from typing import Callable, Sequence, TypeVar

import numpy as np

from arena.harness.outliers import paired_kept

# The bound: the samples may explain the judge's clock less this much (bound_slack; the clocks'
# differences: docs/harness.md, "Why each constant").
_BOUND_RATIO, _BOUND_CALL_US, _BOUND_EMPTY, _BOUND_US = 0.05, 0.3, 0.003, 20.0
# A case's series of timed chunks at most: a series the bound (or the copies' check) calls foul is
# timed again on fresh sets, and only when every series is foul is it the candidate's verdict. An
# honest case gets a second series where a chunk stalled on the judge's clock; session 44's false
# alarm (torch2hip decode_attention, 2092.77 us a call seen against 1621.25 claimed) was the bound
# dropping its heavy sets as outliers, mended by reading them in pairs (claim; session 45,
# bench/results/2026-12-07.md). A forger's samples are foul in every series; the series scored is
# always one that passed.
FOUL_SERIES = 2

_T = TypeVar("_T")


def claim(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """The candidate's work over every call as the score credits it, us: the baseline's samples
    (the judge's own, taken while the worker is frozen) over every call, at the speedup the score
    reads from the pairs it keeps (outliers.paired_kept). The bound then holds the score itself to
    the judge's clock: no speedup beyond what the clock saw over all calls, less the slack.
    Samples that keep the sum honest with many tiny ones and a few huge outliers claim only the
    tiny ones, since those are the speedup scored; a heavy set (its work drawn at random) is heavy
    on both sides and counts in full."""
    return sum(chunk_claims(baseline, candidate, max(1, len(baseline))))


def chunk_claims(baseline: Sequence[float], candidate: Sequence[float], calls: int) -> list[float]:
    """claim() chunk by chunk, us: each chunk's baseline samples (`calls` a chunk) at the scored
    speedup; heavy chunks claim more, so a chunk's margin (chunk_excess) does not swing with its
    sets' work."""
    if not len(baseline):
        return []
    base, cand = paired_kept(baseline, candidate)
    slower = float(np.sum(cand) / np.sum(base))  # 1 / the scored speedup
    return [slower * float(np.sum(baseline[i : i + calls])) for i in range(0, len(baseline), calls)]


def chunk_excess(
    spans: Sequence[float], calls: int, empty_us: float, claims_us: Sequence[float], switch_us: float
) -> list[float]:
    """Per chunk of `calls` calls, us: its span less its empty procedure (`empty_us` a call) and
    the switches, less what the chunk's samples are credited with (`claims_us`, chunk_claims):
    the bound's margin chunk by chunk, for the log."""
    return [span - calls * empty_us - claimed - switch_us for span, claimed in zip(spans, claims_us)]


def paired_excess(excess: Sequence[float], baseline_excess: Sequence[float]) -> list[float]:
    """Per chunk, us: the candidate's chunk_excess less the baseline's own in the same chunk
    (chunk_excess of the judge's clock around its baseline calls, with the judge's empty procedure,
    its trusted samples as scored and no switches). What the empty procedure has drifted since it
    was measured, and what a call adds to a stream beyond its event pair, fall on both sides of a
    chunk and cancel; what is left is what the candidate's samples fail to explain beyond what the
    judge's own fail to."""
    return [mine - theirs for mine, theirs in zip(excess, baseline_excess)]


def bound_slack(claimed: float, empty: float, calls: int, spans: int) -> float:
    """How far the judge's clock may exceed the samples' claim, us: a share of the claim, of the
    empty procedure's time, a little a call and a little a chunk (the _BOUND_* constants)."""
    return _BOUND_RATIO * max(claimed, 0.0) + _BOUND_EMPTY * empty + _BOUND_CALL_US * calls + _BOUND_US * spans


def exceeds_bound(judged: float, claimed: float, empty: float, calls: int, spans: int) -> bool:
    """The bound (docs/harness.md): over a case's `spans` chunks of `calls` calls in all, the work
    the judge's clock saw (`judged`, us, the empty procedure's `empty` us and the switches already
    taken off) beyond what the worker's samples claim (`claimed`, claim) exceeds the slack:
    CHEAT_DETECTED."""
    return judged - claimed > bound_slack(claimed, empty, calls, spans)


def largest_hidden_gain(true_us: float, calls: int, empty_us: float) -> float:
    """How much faster than its truth (`true_us` a call) a forger's samples may claim a kernel is,
    over chunks of `calls` calls whose empty procedure costs `empty_us` a call, and still pass the
    bound: the truth over the lowest claim that passes (inf when any claim passes)."""
    lowest = (true_us * calls - bound_slack(0.0, empty_us * calls, calls, 1)) / ((1 + _BOUND_RATIO) * calls)
    return true_us / lowest if lowest > 0 else math.inf


class Foul(Exception):
    """Every series of a case was foul (first_fair): why, series by series."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; timed again on fresh sets: ".join(reasons))
        self.reasons = reasons


def first_fair(
    time_series: Callable[[], _T], foul: Callable[[_T], str], series: int = FOUL_SERIES
) -> tuple[_T, list[str]]:
    """Series timed by `time_series` until one is not foul (`foul` gives why, or ""), at most
    `series` of them: (the fair one, why each before it was foul). Raises Foul when all were."""
    reasons: list[str] = []
    for _ in range(series):
        timed = time_series()
        why = foul(timed)
        if not why:
            return timed, reasons
        reasons.append(why)
    raise Foul(reasons)
