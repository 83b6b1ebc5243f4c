"""The per-call procedure's logic on CPU, with torch.cuda's events, sync and spin replaced by host
clocks (the GPU figures: bench/RESULTS.md, journal in bench/results/)."""

import time

import pytest
import torch

from arena.harness import flush as flush_module
from arena.harness import timing
from arena.harness.backends.kernel import Kernel
from arena.harness.device import Device


class _HostEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        self.at = 0.0

    def record(self, stream: object = None) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, end: "_HostEvent") -> float:
        return (end.at - self.at) * 1000.0


@pytest.fixture
def flusher(monkeypatch):
    stream = object()
    monkeypatch.setattr(torch.cuda, "Event", _HostEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: stream)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None, raising=False)
    monkeypatch.setattr(timing, "_elapsed_ms", _HostEvent.elapsed_time)
    monkeypatch.setattr(timing, "_calibration", [1000.0])
    monkeypatch.setattr(flush_module, "last_level_cache_bytes", lambda device: 1 << 16)
    monkeypatch.setitem(flush_module._MIN_BYTES, "cuda", 1 << 16)
    return flush_module.Flusher(Device("cuda", 0, torch.device("cpu")))


def test_run_calls_on_fresh_sets_calls_each_set_itself(flusher):
    """The judge's chunks (working None): call k runs on set order[k] itself, no restore; the
    empty procedure (kernel None) still hands every call to `after`."""
    sets = [[torch.full((4,), float(k))] for k in range(5)]
    seen: list[tuple[int, int, float]] = []
    record = Kernel("candidate", lambda inputs, scalars, outputs, dims: inputs[0] * 2, False)

    def after(k: int, j: int, result: object) -> None:
        assert isinstance(result, torch.Tensor)
        seen.append((k, j, float(result[0])))

    pairs, host_us = timing.run_calls(record, [4, 2, 0], sets, None, [], after, flusher, 0, {}, {})
    assert seen == [(0, 4, 8.0), (1, 2, 4.0), (2, 0, 0.0)] and len(pairs) == 3 and len(host_us) == 3
    empty: list[tuple[int, int, object]] = []
    pairs, host_us = timing.run_calls(
        None, [0, 1], [[], []], None, [], lambda k, j, r: empty.append((k, j, r)), flusher, 0, {}, {}
    )
    assert empty == [(0, 0, None), (1, 1, None)] and len(pairs) == 2 and host_us == []


def test_the_interquartile_mean_resolves_below_the_timers_step_and_ignores_outliers() -> None:
    from arena.harness.timing import interquartile_mean

    steps = [1.248] * 40 + [1.28] * 60 + [500.0] * 3  # a median reads 1.28 whatever the mix
    assert 1.248 < interquartile_mean(steps) < 1.28
    assert interquartile_mean([1.0, 2.0, 3.0, 4.0]) == 2.5
