"""The flush pass on CPU tensors: its size from the device, and what each mode touches."""

import pytest
import torch

from arena.harness import flush as flush_module
from arena.harness.device import Device
from arena.harness.settings import HarnessSettings

CUDA_ON_CPU = Device("cuda", 0, torch.device("cpu"))  # the flush logic with host tensors


@pytest.fixture
def small_cache(monkeypatch):
    monkeypatch.setattr(flush_module, "last_level_cache_bytes", lambda device: 3 << 20)
    monkeypatch.setitem(flush_module._MIN_BYTES, "cuda", 1 << 20)


def test_the_buffer_is_twice_the_cache_and_never_below_the_floor(small_cache, monkeypatch):
    assert flush_module.flush_bytes(CUDA_ON_CPU) == 6 << 20
    monkeypatch.setitem(flush_module._MIN_BYTES, "cuda", 8 << 20)
    assert flush_module.flush_bytes(CUDA_ON_CPU) == 8 << 20
    assert flush_module.flush_bytes(Device("rocm", 0, torch.device("cpu"))) == 512 << 20  # Infinity Cache x2


def test_a_read_pass_reads_every_word_and_writes_none_of_the_buffer(small_cache):
    flusher = flush_module.Flusher(CUDA_ON_CPU)
    assert flusher.mode == "read" and flusher.nbytes == 6 << 20
    flusher._buffer[-1] = 7  # only a pass that reaches the last word sees it
    before = flusher._buffer.clone()
    flusher.run()
    assert int(flusher._sink) == 7
    assert torch.equal(flusher._buffer, before)


def test_a_write_pass_rewrites_the_whole_buffer_with_a_new_value_each_time(small_cache):
    flusher = flush_module.Flusher(CUDA_ON_CPU, mode="write")
    flusher.run()
    assert bool((flusher._buffer == 1).all())
    flusher.run()
    assert bool((flusher._buffer == 0).all())


def test_an_unknown_mode_is_refused(small_cache):
    with pytest.raises(ValueError, match="flush mode 'evict'"):
        flush_module.Flusher(CUDA_ON_CPU, mode="evict")


def test_small_calls_are_warmed_under_a_quarter_of_the_cache_and_never_when_told(small_cache):
    assert flush_module.warm_limit(CUDA_ON_CPU, "small") == (3 << 20) // 4
    assert flush_module.warm_limit(CUDA_ON_CPU, "never") == 0
    with pytest.raises(ValueError, match="warm_inputs 'always'"):
        flush_module.warm_limit(CUDA_ON_CPU, "always")


def test_touch_reads_every_byte_of_every_input_of_any_dtype_and_layout(small_cache):
    flusher = flush_module.Flusher(CUDA_ON_CPU)
    floats = torch.zeros(1000)
    floats[-1] = -0.0  # sign bit only, in the last byte of the last element
    flusher.touch([floats])
    assert int(flusher._byte_sink) == 0x80
    ints = torch.zeros(4, 6, dtype=torch.int16).t()  # not contiguous
    ints[5, 3] = 0x0700
    flusher.touch([torch.zeros(0), ints, torch.zeros(3, dtype=torch.bool)])
    assert int(flusher._byte_sink) == 0  # each input is read on its own: the last one, all zero
    flusher.touch([ints])
    assert int(flusher._byte_sink) == 0x07


def test_settings_refuse_an_unknown_warm_inputs_or_backend():
    with pytest.raises(ValueError, match="warm_inputs 'sometimes'"):
        HarnessSettings(warm_inputs="sometimes")
    with pytest.raises(ValueError, match="backend 'tpu'"):
        HarnessSettings(backend="tpu")
