from __future__ import annotations

import pytest

from arena.runner import devices
from arena.runner.devices import discover_lanes, parse_lanes


def test_lanes_given_in_the_environment_win() -> None:
    assert discover_lanes({"ARENA_DEVICES": "0,1, 3"}) == ("0", "1", "3")
    assert discover_lanes({"ARENA_DEVICES": "cpu"}) == ("cpu",)
    assert discover_lanes({"CUDA_VISIBLE_DEVICES": "4,5"}) == ("0", "1")


@pytest.mark.parametrize("text", ["", "gpu0", "0,0", "-1"])
def test_bad_lanes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_lanes(text)


def test_no_gpu_means_one_cpu_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "count_nvidia_gpus", lambda: 0)
    monkeypatch.setattr(devices, "count_rocm_gpus", lambda: 0)
    assert discover_lanes({}) == ("cpu",)
    monkeypatch.setattr(devices, "count_rocm_gpus", lambda: 2)
    assert discover_lanes({}) == ("0", "1")
