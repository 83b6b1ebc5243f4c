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


def test_a_namespace_function_is_recorded_under_its_public_name():
    """F.linear is torch._C._nn.linear and torch.linalg.matmul torch._C._linalg.linalg_matmul:
    recorded under their namespaces' names too, whether called as such, by an operator of
    torch.ops or through a name built at run time."""
    a, b = torch.ones(2, 2), torch.ones(2, 2)
    functional = getattr(torch.nn, "function" + "al")
    _, calls = guard.record_ops(lambda: getattr(functional, "lin" + "ear")(a, b))
    assert guard.forbidden_ops(calls, ["torch.nn.functional"]) == ["torch.nn.functional.linear"]
    _, calls = guard.record_ops(lambda: torch.ops.aten.linalg_matmul.default(a, b))
    assert guard.forbidden_ops(calls, ["torch.linalg"]) == ["torch.linalg.matmul"]
    assert guard.forbidden_ops(calls, ["torch.matmul"]) == ["torch.linalg.matmul"]  # the same operation
    _, calls = guard.record_ops(lambda: torch.ops.aten.mm.default(a, b))
    assert calls == {"torch.mm", "torch.ops.aten.mm"}  # an operator by its own name, whatever the overload
    assert guard.forbidden_ops(calls, ["torch.ops"]) == ["torch.ops.aten.mm"]  # and as torch.ops has it


def test_a_method_inherited_and_shadowed_is_a_replacement(monkeypatch):
    before = guard.take_snapshot()
    monkeypatch.setattr(torch.Tensor, "fresh_name_of_no_base", lambda self: None, raising=False)
    assert guard.replaced_names(before) == []  # a name added that shadows nothing
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, src, non_blocking=False: self, raising=False)
    assert guard.replaced_names(before) == ["torch.Tensor.copy_"]  # torch._C.TensorBase's, shadowed


def test_a_private_name_is_matched_as_the_recorder_names_it():
    """The recorder names torch._foreach_add_ "torch.foreach_add": a task's rule with its
    underscores covers it (mini_train_step forbids torch._foreach_add_ and torch._fused_adamw_)."""
    xs, ys = [torch.ones(2)], [torch.ones(2)]
    _, calls = guard.record_ops(lambda: torch._foreach_add_(xs, ys))
    assert calls == {"torch.foreach_add"}
    assert guard.forbidden_ops(calls, ["torch._foreach_add_"]) == ["torch.foreach_add"]


def test_a_forbidden_name_brings_its_family():
    a, v = torch.ones(2, 2), torch.ones(2)
    _, calls = guard.record_ops(lambda: (torch.chain_matmul(a, a), a.__rmatmul__(a), torch.outer(v, v)))
    assert guard.forbidden_ops(calls, ["torch.matmul"]) == sorted(calls)
    _, calls = guard.record_ops(lambda: torch.log_softmax(a, 0).exp())
    assert guard.forbidden_ops(calls, ["torch.softmax"]) == ["torch.log_softmax"]
    assert guard.forbidden_ops(calls, ["torch.add"]) == []  # no family: the rule alone
