"""The bound's margins on the CPU: what the score believes against what the judge's clock saw
(arena.harness.bound; the GPU path: cheat_judge_gpu_test.py and bench/forger.py)."""

import numpy as np
import pytest

from arena.harness import bound
from arena.harness.bound import FOUL_SERIES, Foul, first_fair
from arena.harness.outliers import drop_outliers
from arena.scoring.stats import compare_samples


def test_the_bound_credits_what_the_score_keeps():
    baseline = [10.0] * 100
    honest = [10.0] * 49 + [12.0] + [10.0] * 49 + [14.0]
    # The two slow calls are the score's outliers: the claim is the baseline's every call at the kept ratio.
    assert bound.claim(baseline, honest) == 100 * 10.0
    # About the same sum with a median of 1 us: these samples no longer explain the judge's clock.
    forged = ([1.0] * 45 + [91.6] * 5) * 2
    assert abs(sum(forged) - sum(honest)) < 2.0
    assert bound.claim(baseline, forged) == pytest.approx(100 * 1.0)
    assert bound.claim([], []) == 0.0


def _drawn_work(calls: int, seed: int) -> list[float]:
    """Each set's work, us: a few sets much heavier than most (decode_attention's lengths drawn at random)."""
    rng = np.random.default_rng(seed)
    return list(np.where(rng.random(calls) < 0.1, 600.0, 100.0) + rng.normal(0.0, 1.0, calls))


def test_sets_whose_work_is_drawn_at_random_are_credited_in_full():
    # An honest no-op over 60 calls of which about 1 in 10 sets is 6x heavier, on both sides alike.
    work = _drawn_work(60, 45)
    noop = [t * 1.001 for t in work]
    judged = sum(noop)
    assert bound.claim(work, noop) == pytest.approx(judged)
    assert not bound.exceeds_bound(judged, bound.claim(work, noop), 0.0, 60, 6)
    # Read side by side (session 44's rule) the heavy calls were the outliers, and the no-op foul.
    side_by_side = 60 * float(np.mean(drop_outliers(noop)))
    assert bound.exceeds_bound(judged, side_by_side, 0.0, 60, 6)
    # Each chunk's claim follows its own sets: its margin does not swing with their work.
    claims = bound.chunk_claims(work, noop, 10)
    spans = [sum(noop[i : i + 10]) for i in range(0, 60, 10)]
    assert all(abs(e) < 1e-6 for e in bound.chunk_excess(spans, 10, 0.0, claims, 0.0))


def test_a_forger_on_sets_of_random_work_is_still_held_to_the_judges_clock():
    work = _drawn_work(60, 46)
    truth = [t * 1.001 for t in work]
    # Claiming 20% less on every call, heavy or not: the scored speedup is 1.25, the clock's 1.0.
    shaved = [t * 0.8 for t in truth]
    assert bound.exceeds_bound(sum(truth), bound.claim(work, shaved), 0.0, 60, 6)
    # Or the same sum, with the calls of the heaviest sets made the outliers of the ratio.
    heavy = [t > 300 for t in work]
    light_sum = sum(t for t, h in zip(truth, heavy) if not h)
    moved = [t * 0.5 if not h else t + 0.5 * light_sum / sum(heavy) for t, h in zip(truth, heavy)]
    assert sum(moved) == pytest.approx(sum(truth))
    assert bound.exceeds_bound(sum(truth), bound.claim(work, moved), 0.0, 60, 6)


def test_paired_samples_need_as_many_calls_a_side():
    with pytest.raises(ValueError, match="the baseline has 3, the candidate 2"):
        bound.claim([1.0, 2.0, 3.0], [1.0, 2.0])


def test_chunk_excess_is_each_chunks_margin():
    # 4 calls a chunk claimed at 8 us in all, 5 us of empty procedure a call, 30 us of switches: 8 + 20 + 30 = 58 us.
    assert bound.chunk_excess([58.0, 61.5], 4, 5.0, [8.0, 8.0], 30.0) == [0.0, 3.5]


def test_the_bounds_slack_is_its_four_terms():
    # 5% of 1000 us claimed, 0.3% of 500 us empty, 0.3 us for each of 48 calls, 20 us a chunk.
    assert abs(bound.bound_slack(1000.0, 500.0, 48, 1) - (50.0 + 1.5 + 14.4 + 20.0)) < 1e-9
    # A negative claim earns no ratio: the slack is the other terms only.
    assert abs(bound.bound_slack(-50.0, 0.0, 10, 2) - (3.0 + 40.0)) < 1e-9


def test_a_claim_inside_the_slack_passes_one_just_outside_does_not():
    claimed, empty, calls, spans = 1000.0, 500.0, 48, 1
    slack = bound.bound_slack(claimed, empty, calls, spans)
    assert not bound.exceeds_bound(claimed, claimed, empty, calls, spans)  # the truth
    assert not bound.exceeds_bound(claimed + slack - 0.01, claimed, empty, calls, spans)
    assert bound.exceeds_bound(claimed + slack + 0.01, claimed, empty, calls, spans)
    # Samples that claim more than the judge saw are never caught: they only cost the candidate.
    assert not bound.exceeds_bound(0.5 * claimed, claimed, empty, calls, spans)


def test_a_claim_2x_better_than_the_judges_clock_is_caught_from_a_few_us_a_call():
    # 48 calls of 8 us seen by the judge in one chunk, the samples claiming 4 us each.
    calls = 48
    assert bound.exceeds_bound(8.0 * calls, 4.0 * calls, 2.0 * calls, calls, 1)
    assert not bound.exceeds_bound(1.0 * calls, 0.5 * calls, 2.0 * calls, calls, 1)  # too small to tell


def test_the_largest_hidden_gain_is_the_edge_of_the_bound():
    calls, empty = 48, 100.0
    for true in (3.0, 10.0, 50.0, 500.0):
        gain = bound.largest_hidden_gain(true, calls, empty)
        lowest = true / gain
        args = (empty * calls, calls, 1)
        assert not bound.exceeds_bound(true * calls, lowest * 1.0001 * calls, *args)  # passes
        assert bound.exceeds_bound(true * calls, lowest * 0.999 * calls, *args)  # caught
    # The fixed part of the slack is about 1 us a call at 48 calls: a 3 us kernel may claim 1.59x.
    assert 1.55 < bound.largest_hidden_gain(3.0, calls, empty) < 1.6
    assert bound.largest_hidden_gain(0.5, calls, empty) == float("inf")


def test_the_paired_excess_cancels_what_falls_on_both_sides_of_a_chunk():
    # 48 calls of a 3 us kernel on each side; since measure_empty the empty procedure has grown
    # 1.5 us a call on both sides, and a call adds 0.8 us less to a stream than its pair reads.
    calls, switch = 48, 300.0
    empty = {"judge": 60.0, "worker": 60.4}  # the worker's procedure costs 0.4 us a call more
    truth, drift, overlap = 3.0, 1.5, -0.8
    per_call = {side: empty[side] + drift + truth + overlap for side in empty}
    spans = [switch + calls * per_call["worker"]] * 3
    baseline_spans = [calls * per_call["judge"]] * 3
    honest = {"judge": truth, "worker": truth}
    # Unpaired, the drift and the overlap read as the candidate's: 0.7 us a call.
    unpaired = bound.chunk_excess(spans, calls, empty["worker"], [calls * honest["worker"]] * 3, switch)
    assert abs(unpaired[0] / calls - (drift + overlap)) < 1e-9
    # Paired with the baseline they cancel: an honest candidate's excess is 0 ...
    own = bound.chunk_excess(baseline_spans, calls, empty["judge"], [calls * honest["judge"]] * 3, 0.0)
    paired = bound.paired_excess(unpaired, own)
    assert all(abs(e) < 1e-9 for e in paired)
    # ... and a forger claiming 10% less than its truth leaves 0.3 us a call unexplained.
    forged = bound.chunk_excess(spans, calls, empty["worker"], [calls * truth / 1.1] * 3, switch)
    paired = bound.paired_excess(forged, own)
    assert all(abs(e / calls - (truth - truth / 1.1)) < 1e-9 for e in paired)


def _series(*fouls: str):
    """A time_series that gives series 0, 1, ... and a foul() that reads each one's verdict from `fouls`."""
    timed: list[int] = []

    def time_series() -> int:
        timed.append(len(timed))
        return timed[-1]

    return timed, time_series, lambda index: fouls[index]


def test_a_fair_first_series_is_scored_and_no_other_is_timed():
    timed, time_series, foul = _series("", "never reached")
    assert first_fair(time_series, foul) == (0, [])
    assert timed == [0]


def test_a_stall_in_the_first_series_is_timed_again_and_the_fresh_series_scored():
    timed, time_series, foul = _series("the judge's clock saw 2092.77 us", "")
    assert first_fair(time_series, foul) == (1, ["the judge's clock saw 2092.77 us"])
    assert timed == [0, 1]


def test_a_forger_foul_in_every_series_is_caught_with_each_series_reason():
    timed, time_series, foul = _series("first: claim 3.0 saw 6.0", "second: claim 3.1 saw 6.2", "unused")
    with pytest.raises(Foul, match="timed again on fresh sets") as caught:
        first_fair(time_series, foul)
    error: Foul = caught.value  # type: ignore[assignment]  # this pytest's stubs lose the type
    assert error.reasons == ["first: claim 3.0 saw 6.0", "second: claim 3.1 saw 6.2"]
    assert len(timed) == FOUL_SERIES == 2


def test_the_series_scored_is_never_a_foul_one():
    for verdicts in [("x", ""), ("", "x"), ("", "")]:
        _, time_series, foul = _series(*verdicts)
        scored, _ = first_fair(time_series, foul)
        assert verdicts[scored] == ""


def test_the_claim_is_the_baselines_every_call_at_the_speedup_the_score_reads():
    # Whatever the samples, the bound credits exactly what the score believes: the baseline's
    # calls, all of them, at the scored speedup (the one outlier rule, by pairs).
    rng = np.random.default_rng(47)
    for _ in range(20):
        calls = int(rng.integers(4, 200))
        baseline = list(rng.lognormal(3.0, 0.6, calls))
        candidate = list(np.asarray(baseline) * rng.lognormal(0.0, 0.3, calls) / rng.uniform(0.5, 3.0))
        speedup = compare_samples(baseline, candidate).speedup
        assert bound.claim(baseline, candidate) == pytest.approx(sum(baseline) / speedup)
