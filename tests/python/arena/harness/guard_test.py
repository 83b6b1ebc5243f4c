import time

import torch

from arena.harness import guard


def test_snapshot_sees_replaced_functions(monkeypatch):
    before = guard.take_snapshot()
    assert guard.replaced_names(before) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 0.0)
    assert guard.replaced_names(before) == ["time.perf_counter", "torch.cuda.Event.elapsed_time"]


def test_no_modes_active_outside_a_mode():
    from torch.overrides import TorchFunctionMode

    assert guard.active_modes() == ""
    with TorchFunctionMode():
        assert "function mode" in guard.active_modes()


def test_recorded_calls_match_forbidden_names():
    x = torch.ones(3)
    _, calls = guard.record_ops(lambda: (x + x, torch.nn.functional.relu(x), x.softmax(0)))
    assert {"torch.Tensor.add", "torch.nn.functional.relu", "torch.Tensor.softmax"} <= calls
    assert guard.forbidden_ops(calls, ["torch.add"]) == ["torch.Tensor.add"]
    assert guard.forbidden_ops(calls, ["torch.nn.functional"]) == ["torch.nn.functional.relu"]
    assert guard.forbidden_ops(calls, ["torch.matmul"]) == []
