"""The judge's slot layout on the CPU (the GPU path itself: cheat_judge_gpu_test.py and bench/)."""

import math
import statistics

import pytest
import torch

from arena.harness import judged_timing, lent
from arena.harness.device import Device
from arena.harness.shared_gpu import typed_view
from arena.harness.verdict import Verdict


def test_every_slot_of_an_output_is_one_strided_view():
    outputs = [torch.empty(3, 5, dtype=torch.float32), torch.empty(7, dtype=torch.int64)]
    layout = lent.Layout.of(outputs, 4)
    data = torch.zeros(layout.nbytes(), dtype=torch.uint8)
    slots = [[typed_view(data, p) for p in row] for row in layout.outputs]
    for k, (a, b) in enumerate(slots):
        a.fill_(k + 0.5)
        b.fill_(-k)
    assert all(p["offset"] % 256 == 0 for row in layout.outputs for p in row)
    first = lent.stacked(data, layout.outputs, 0, 0, 4)
    assert first.shape == (4, 15) and torch.equal(first[:, 0], torch.tensor([0.5, 1.5, 2.5, 3.5]))
    second = lent.stacked(data, layout.outputs, 1, 1, 3)
    assert second.shape == (3, 7) and torch.equal(second[:, 3], torch.tensor([-1, -2, -3]))


def test_a_single_slot_stacks_too():
    layout = lent.Layout.of([torch.empty(10, dtype=torch.float16)], 1)
    data = torch.zeros(layout.nbytes(), dtype=torch.uint8)
    typed_view(data, layout.outputs[0][0]).fill_(2.0)
    assert torch.equal(lent.stacked(data, layout.outputs, 0, 0, 1), torch.full((1, 10), 2.0, dtype=torch.float16))


def test_each_side_takes_off_its_own_launch_so_a_process_offset_cancels():
    # A call's event time in a process: pair + first launch + that process's offset, then each
    # further kernel a launch in a stream, and the work of every kernel (the model the H200 fits,
    # bench/process_offset_probe.py).
    pair, first, stream = 1.55, 2.1, 1.7

    def raw(offset: float, work: float, kernels: int) -> float:
        return pair + first + offset + (kernels - 1) * stream + kernels * work

    offsets = {"judge": 0.25, "worker": -0.05}  # two processes' constants
    launch = {side: raw(d, 0.0, 1) for side, d in offsets.items()}
    second = {side: raw(d, 0.0, 2) - raw(d, 0.0, 1) for side, d in offsets.items()}
    taken = judged_timing.side_offsets(launch, sum(second.values()) / 2)
    once = {side: raw(d, 0.9, 1) - taken[side] for side, d in offsets.items()}
    assert abs(once["judge"] - once["worker"]) < 1e-9  # a no-op reads 1.0 across the processes
    twice = raw(offsets["judge"], 0.9, 2) - taken["judge"]
    assert abs(once["worker"] / twice - 0.5) < 1e-9  # launched twice reads twice
    # With only the empty pair off, both go wrong: the processes differ and twice reads < 2x.
    assert abs((raw(0.25, 0.9, 1) - pair) / (raw(-0.05, 0.9, 1) - pair) - 1) > 0.05
    assert (raw(0.0, 0.9, 1) - pair) / (raw(0.0, 0.9, 2) - pair) > 0.53


def test_a_side_never_takes_off_less_than_nothing():
    assert judged_timing.side_offsets({"judge": 1.0, "worker": 3.0}, 2.0) == {"judge": 0.0, "worker": 1.0}


def test_chunks_alternate_the_side_timed_first() -> None:
    # A B, B A, ...: over any even run of chunks each side goes first in half of them.
    firsts = [judged_timing.first_side(chunk) for chunk in range(6)]
    assert firsts == ["baseline", "candidate"] * 3


def test_interleaved_empty_calls_are_read_by_their_launch_count():
    # Call k had LAUNCH_CYCLE[k % 3] empty kernels: 1.0 us with none, 3.0 with one, 4.5 with two,
    # over three chunks; one outlier per count must not move its reading.
    times = [1.0, 3.0, 4.5] * 30
    times[0], times[4], times[8] = 50.0, 0.0, 90.0
    assert judged_timing._by_launches(times, len(judged_timing.LAUNCH_CYCLE)) == [1.0, 3.0, 4.5]
    # KIND_CYCLE's two counts, read the same way: a later launch is their difference over six.
    few, many = judged_timing.KIND_CYCLE
    kinds = judged_timing._by_launches([3.0 + 2.0 * few, 3.0 + 2.0 * many] * 20, 2)
    assert (kinds[1] - kinds[0]) / (many - few) == 2.0


def test_no_empty_kernels_at_all_is_no_kernel():
    from arena.harness.timing import empty_launches

    assert empty_launches((0, 0)) is None
    cycle = empty_launches(judged_timing.LAUNCH_CYCLE)
    assert cycle is not None and cycle.label == "empty kernels (0, 1, 2)"


class _Chunks:
    """A lent.Lent stand-in that records the order of a chunk's steps."""

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def stage(self, drawn):
        self.steps.append(f"stage {drawn}")  # the judge draws both sides' sets first
        self.drawn = drawn

    def baseline_chunk(self):
        self.steps.append("baseline")
        return 4.0, [1.0] * len(self.drawn)

    def candidate_chunk(self):
        self.steps.append("candidate")
        return 5.0, [0.5], []


def _judge(monkeypatch, backend: str, answer: str, steps: list[str]) -> judged_timing.Judge:
    """A Judge with only what reset_l2 reads; disable_persisting_l2 notes "reset" in `steps`
    and answers `answer`."""

    def reset() -> str:
        steps.append("reset")
        return answer

    monkeypatch.setattr(judged_timing, "disable_persisting_l2", reset)
    judge = object.__new__(judged_timing.Judge)
    judge.device, judge.l2_unavailable = Device(backend, 0, torch.device("cpu")), ""
    return judge


def test_the_persisting_l2_reset_runs_before_every_timed_chunk_of_either_side(monkeypatch):
    steps: list[str] = []
    judge, log = _judge(monkeypatch, "cuda", "", steps), list[str]()
    for index in range(2):
        got = judged_timing.timed_chunks(_Chunks(steps), index, [7], judge.reset_l2, log)
        assert got == (4.0, [1.0], 5.0, [0.5], [])
    assert steps == ["stage [7]", "reset", "baseline", "reset", "candidate"] + [
        "stage [7]",
        "reset",
        "candidate",
        "reset",
        "baseline",
    ]
    assert log == []


def test_an_unavailable_reset_is_noted_once_and_rocm_has_none(monkeypatch):
    calls: list[str] = []
    judge, log = _judge(monkeypatch, "cuda", "persisting-L2 gone", calls), list[str]()
    for index in range(3):
        judged_timing.timed_chunks(_Chunks([]), index, [7], judge.reset_l2, log)
    assert log == ["persisting-L2 gone"] and calls == ["reset"]
    rocm = _judge(monkeypatch, "rocm", "", calls)
    assert rocm.reset_l2() == "" and calls == ["reset"]


def test_queueing_tells_a_host_held_by_the_gpu_from_a_slow_one():
    # Done well before `go`: the wait sufficed, the count of held tries starts again.
    assert lent.queueing(3.0, 10.0, 1) == ("ok", 0)
    # Ended as the GPU reached `go` (its launches filled the stream's queue, or it synchronised):
    # once may be chance, twice in a row at a longer wait is the GPU holding it.
    assert lent.queueing(10.2, 10.0, 0) == ("again", 1)
    assert lent.queueing(20.3, 20.0, 1) == ("held", 2)
    # A host slower than the wait but not tied to it is given a longer wait, up to the ceiling.
    assert lent.queueing(35.0, 20.0, 1) == ("again", 0)
    assert lent.queueing(2500.0, 2000.0, 0) == ("slow", 0)
    # Held at the ceiling once only: slow, and not cut (the count of calls would not help).
    assert lent.queueing(2010.0, 2000.0, 0) == ("slow", 1)


def test_a_held_queue_is_a_verdict_that_a_smaller_chunk_may_avoid():
    blocked = lent.QueueBlocked("took 2000 ms", on_gpu=True)
    assert blocked.status == "RUNTIME_ERROR" and blocked.on_gpu and "2000 ms" in str(blocked)


def test_copies_of_the_workers_sets_slower_than_the_judges_own_are_a_cheat():
    # The worker's sets land in its lent pool just before `go`; GPU work of the candidate's
    # reading them as they land (before the clock) shares the GPU with those copies.
    same = {"judge": [100.0, 104.0, 98.0], "worker": [101.0, 103.0, 140.0]}
    assert judged_timing.crowded_copies(same) == ""
    assert judged_timing.crowded_copies({"judge": [], "worker": [500.0]}) == ""  # the judge's not placed
    tiny = {"judge": [4.0, 4.0], "worker": [20.0, 21.0]}  # within the per-chunk allowance
    assert judged_timing.crowded_copies(tiny) == ""
    crowded = {"judge": [100.0, 101.0, 99.0], "worker": [190.0, 185.0, 200.0]}
    why = judged_timing.crowded_copies(crowded)
    assert "took 190 us a chunk against 99 us" in why and "ran beside them" in why
    # The judge's own copies stalled in most chunks: its fastest still sets the reference.
    stalled = {"judge": [300.0, 280.0, 100.0], "worker": [190.0, 185.0, 200.0]}
    assert "against 100 us" in judged_timing.crowded_copies(stalled)


def test_a_case_stops_once_its_speedup_is_known_closely_enough():
    assert judged_timing.ratio_width([1.0] * 5) is None  # too few chunks
    assert judged_timing.ratio_width([1.0, 1.001] * 3 + [1.0]) is None  # an odd count: one side first more
    steady = [1.0, 1.002, 0.999, 1.001, 1.0, 0.998]
    width = judged_timing.ratio_width(steady)
    assert width is not None and width < judged_timing._STOP_WIDTH
    noisy = [1.0, 1.05, 0.96, 1.03, 0.98, 1.01]
    wide = judged_timing.ratio_width(noisy)
    assert wide is not None and wide > judged_timing._STOP_WIDTH
    # Student's t for 5 degrees of freedom: 2.571 x sd / sqrt(6) / mean.
    assert abs(wide - 2.571 * statistics.stdev(noisy) / math.sqrt(6) / statistics.fmean(noisy)) < 1e-12


def test_twin_calls_fall_in_a_chunk_every_case_runs_and_vary_with_the_seed():
    def twin(seed: int, chunks: int = 33, calls: int = 48) -> tuple[int, int, int]:
        picked = judged_timing.twin_calls(seed, chunks, calls)
        assert picked is not None
        return picked

    picks = {twin(seed) for seed in range(200)}
    assert all(chunk < judged_timing._STOP_CHUNKS and first != second for chunk, first, second in picks)
    assert {chunk for chunk, _, _ in picks} == set(range(judged_timing._STOP_CHUNKS))  # any of them
    assert len(picks) > 150  # the calls too: a candidate cannot guess them
    assert twin(5) == twin(5)  # the seed decides
    assert {twin(s, 2, 7)[0] for s in range(50)} == {0, 1}  # short cases
    assert judged_timing.twin_calls(5, 33, 1) is None  # one call a chunk: no pair


def test_same_bits_compares_two_calls_slots_byte_for_byte():
    outputs = [torch.empty(3, dtype=torch.float32), torch.empty(2, dtype=torch.int64)]
    chunk = object.__new__(lent.Lent)
    chunk.layout = lent.Layout.of(outputs, 3)
    chunk.snapshot_bytes = torch.zeros(chunk.layout.nbytes(), dtype=torch.uint8)
    slots = [[typed_view(chunk.snapshot_bytes, p) for p in row] for row in chunk.layout.outputs]
    for row in slots:
        row[0].copy_(torch.tensor([1.0, -0.0, float("nan")]))
        row[1].copy_(torch.tensor([4, 5]))
    assert chunk.same_bits(0, 2)
    slots[2][0][1] = 0.0  # -0.0 and 0.0 are equal numbers, not the same bits
    assert not chunk.same_bits(0, 2) and chunk.same_bits(0, 1)
    slots[1][1][0] = 6
    assert not chunk.same_bits(0, 1)


def test_the_workers_landing_counts_are_taken_only_as_small_ints():
    assert lent.reported_landing({"aimed": 4, "landed": 3}, 4) == {"aimed": 4, "landed": 3}
    # A worker's reply is the candidate's to forge: nothing in it may stop the judge or swell the log.
    assert lent.reported_landing({"aimed": "4", "landed": 3.0}, 4) == {"aimed": 0, "landed": 0}
    assert lent.reported_landing({"aimed": 10**9, "landed": -1}, 4) == {"aimed": 0, "landed": 0}
    assert lent.reported_landing({"aimed": True, "landed": 2}, 4) == {"aimed": 0, "landed": 2}
    assert lent.reported_landing(["aimed"], 4) == lent.reported_landing(None, 4) == {"aimed": 0, "landed": 0}


def _series_tally(stall_us: float = 0.0, claim_us: float = 100.0) -> judged_timing._Tally:
    """A series of 6 chunks of 2 calls each of 100 us on the judge's clock (empty procedure 10 us
    and spin 20 us a call, switches 100 us a chunk), the samples claiming `claim_us` a call, with
    `stall_us` more in the third chunk's span."""
    spans = [2 * (10.0 + 20.0 + 100.0) + 100.0] * 6
    spans[2] += stall_us
    return judged_timing._Tally(
        baseline=[100.0] * 12,
        candidate=[claim_us] * 12,
        spans=spans,
        baseline_spans=[2 * (10.0 + 20.0 + 100.0)] * 6,
        spin_us=20.0,
    )


class _WarmUp:
    """The warm-up's Lent: 100 us a call on both sides."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *error) -> None:
        return None

    def warm_up(self, seeds):
        return [100e-6, 100e-6], [10.0, 20.0]


def _timing_judge(monkeypatch, series: list[judged_timing._Tally]) -> tuple[judged_timing.Judge, list[int]]:
    """A Judge with what time_case reads, whose series of chunks are `series` in turn (how many
    were timed: the list returned)."""
    judge = object.__new__(judged_timing.Judge)
    name = "case"
    judge.input_bytes, judge.warm_bytes = {name: 1024}, 1 << 20
    judge.clock = type("Clock", (), {"cycles": 1000.0, "scatter": type("S", (), {"note": "placed"})()})()
    judge.empty_us, judge.judge_empty_us, judge.switch_us = {name: 10.0}, {name: 10.0}, 100.0
    judge.launch_us, judge.stream_us = {name: {"judge": 3.9, "worker": 3.9}}, {name: 2.3}
    judge.stream_side_us = {name: {"judge": 2.3, "worker": 2.3}}
    judge.judge_pair_us, judge.worker_pair_us = {name: 1.3}, {name: 1.3}
    judge.apart, judge.apart_switch_us = None, 0.0  # the baseline in the judge (settings.baseline_worker off)
    timed: list[int] = []

    def chunks(*args):
        timed.append(len(timed))
        return series[timed[-1]], 2

    monkeypatch.setattr(judged_timing, "Lent", _WarmUp)
    monkeypatch.setattr(judge, "_chunks_that_queue", chunks)
    return judge, timed


def _time(judge: judged_timing.Judge) -> judged_timing.JudgedTiming:
    case = type("Case", (), {"name": "case"})()
    return judge.time_case(None, case, lambda n: [0] * n, [torch.empty(64)], [], {}, {}, 1, 1.0)  # type: ignore[arg-type]


def test_a_series_the_bound_calls_foul_is_timed_again_and_the_fresh_one_scored(monkeypatch):
    # A stall of 3 ms in one chunk, then an honest series: the second is what the score reads.
    judge, timed = _timing_judge(monkeypatch, [_series_tally(stall_us=3000.0), _series_tally(claim_us=99.0)])
    timing = _time(judge)
    assert timed == [0, 1]
    assert timing.candidate_us == (99.0,) * 12 and timing.chunks == 6
    assert "a series called foul, timed again on fresh sets: the candidate's timings claim 100.00 us" in timing.log
    assert "chunk by chunk: +0.0, +0.0, +1500.0, +0.0" in timing.log


def test_an_honest_first_series_is_the_only_one(monkeypatch):
    judge, timed = _timing_judge(monkeypatch, [_series_tally()])
    assert _time(judge).candidate_us == (100.0,) * 12 and timed == [0]


def test_samples_foul_in_every_series_are_a_cheat(monkeypatch):
    # Samples claiming half of what the judge's clock saw, series after series: a forger.
    judge, timed = _timing_judge(monkeypatch, [_series_tally(claim_us=50.0), _series_tally(claim_us=50.0)])
    with pytest.raises(Verdict, match="timed again on fresh sets") as caught:
        _time(judge)
    verdict: Verdict = caught.value  # type: ignore[assignment]  # this pytest's stubs lose the type
    assert verdict.status == "CHEAT_DETECTED" and timed == [0, 1]
    assert str(caught.value).count("claim 50.00 us a call but the judge's clock saw 100.00 us") == 2


def test_an_honest_series_whose_sets_differ_in_work_is_not_foul(monkeypatch):
    # decode_attention's lengths are drawn per set: here 2 calls of 6 chunks are 6x heavier, on
    # both sides. Session 44's bound read the samples side by side, dropped those calls as
    # outliers and called the series foul twice over: CHEAT_DETECTED for a no-op.
    work = [100.0] * 12
    work[4] = work[9] = 600.0
    tally = judged_timing._Tally(
        baseline=list(work),
        candidate=list(work),
        spans=[2 * (10.0 + 20.0) + work[i] + work[i + 1] + 100.0 for i in range(0, 12, 2)],
        baseline_spans=[2 * (10.0 + 20.0) + work[i] + work[i + 1] for i in range(0, 12, 2)],
        spin_us=20.0,
    )
    judge, timed = _timing_judge(monkeypatch, [tally, tally])
    timing = _time(judge)
    assert timed == [0] and timing.candidate_us == tuple(work)
    assert "the judge's clock beyond the samples' claim: +0.000 us a call (sd 0.000" in timing.log


def test_the_side_timed_second_is_read_from_chunks_each_side_led():
    # Speedups about 1.14 where the baseline led (the candidate second), 0.87 where the candidate
    # did: the side timed second read 14% faster.
    read = judged_timing.second_side_gain([1.15, 0.87, 1.13, 0.88, 1.14, 0.86])
    assert read is not None
    gain, baseline_led, candidate_led = read
    assert (baseline_led, candidate_led) == pytest.approx((1.14, 0.87), abs=1e-9)
    assert gain == pytest.approx((1.14 / 0.87) ** 0.5 - 1) and 0.14 < gain < 0.15
    assert judged_timing.second_side_gain([1.0, 1.0, 1.0, 1.0]) == (0.0, 1.0, 1.0)
    assert judged_timing.second_side_gain([1.0]) is None  # only chunks the baseline led


def test_the_time_stage_logs_the_side_timed_seconds_gain(monkeypatch):
    tally = _series_tally()
    tally.ratios = [1.02, 0.98] * 3
    judge, _ = _timing_judge(monkeypatch, [tally])
    assert "the side timed second read +2.02% faster (the speedup 1.0200 over the chunks the baseline led" in (
        _time(judge).log
    )
