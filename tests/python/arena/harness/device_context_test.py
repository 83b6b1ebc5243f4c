"""`torch.cuda.device(...)` in a kernel file's wrapper, on the CPU interpreter without a GPU."""

from __future__ import annotations

import pytest
import torch

from arena.harness.backends.interpreter import allow_device_context
from arena_testing.add_task import ADD_KERNEL

# The wrapper selects its tensors' GPU, as vLLM's do: on the CPU, x.device.index is None.
DEVICE_CONTEXT_ADD = ADD_KERNEL.format(op="+", block=128).replace(
    "    _add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)\n",
    "    with torch.cuda.device(x.device.index):\n        _add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)\n",
)


def test_a_wrapper_that_selects_its_gpu_passes_on_the_interpreter(run_candidate) -> None:
    assert "torch.cuda.device(x.device.index)" in DEVICE_CONTEXT_ADD
    result = run_candidate(DEVICE_CONTEXT_ADD)
    assert result.status == "PASSED", result.errors


def test_the_context_does_nothing_only_in_the_interpreter_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    real = torch.cuda.device
    monkeypatch.setattr(torch.cuda, "device", real)  # put back after the test
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    allow_device_context()
    assert torch.cuda.device is real  # a GPU is present: never replaced
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TRITON_INTERPRET")
    allow_device_context()
    assert torch.cuda.device is real  # not the interpreter
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    allow_device_context()
    assert torch.cuda.device is not real
    for device in (None, 0, torch.device("cpu")):
        with torch.cuda.device(device):
            pass
