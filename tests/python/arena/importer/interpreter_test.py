"""Following code on shapes: what a kernel wrapper returns, and what the reading refuses."""

from __future__ import annotations

import ast

import pytest

from arena.importer import torch_rules
from arena.importer.interpreter import Interpreter, module_scope
from arena.importer.values import CannotRead, DType, Tensor, Unknown, broadcast, promote

WRAPPER = """
import torch
import triton
import triton.language as tl

BLOCK = 128


def cdiv(a, b):
    return (a + b - 1) // b


@triton.jit
def _kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


def wrapper(x, w, block=BLOCK, *, transpose=False):
    M, N = x.shape
    if M == 0:
        return x
    out = torch.empty((M, cdiv(N, block)), device=x.device, dtype=torch.float32)
    grid = lambda meta: (M,)
    _kernel[grid](x, out, N, BLOCK=block)
    for i in range(3):
        scratch = i
    if transpose:
        out = out.t()
    return (out * w[:1]).to(x.dtype)


def branchy(x):
    if x.sum() > 0:
        return x
    return x.float()


def uses_scratch(x):
    for i in range(2):
        scratch = x
    return scratch


def made_contiguous(a, b):
    if a.stride(-1) != 1 and a.stride(0) != 1:
        a = a.contiguous()
        b = b.float()
    return a, b
"""


def _call(name: str, *args: object, **kwargs: object) -> object:
    interpreter = Interpreter()
    scope = module_scope(ast.parse(WRAPPER), interpreter)
    return interpreter.call_function(scope[name], list(args), dict(kwargs))  # type: ignore[arg-type]


def test_a_wrapper_is_followed_to_the_shape_and_dtype_it_returns() -> None:
    x, w = Tensor((6, 300), "float16"), Tensor((4,), "float32")
    assert _call("wrapper", x, w) == Tensor((6, 3), "float16")
    assert _call("wrapper", x, w, 64) == Tensor((6, 5), "float16")
    assert _call("wrapper", x, w, transpose=True) == Tensor((3, 6), "float16")
    assert _call("wrapper", Tensor((0, 8), "int32"), w) == Tensor((0, 8), "int32")  # the early return


def test_what_the_reading_cannot_decide_is_refused_with_the_reason() -> None:
    with pytest.raises(CannotRead, match="a return inside an `if` whose test cannot be read"):
        _call("branchy", Tensor((2,), "float32"))
    unknown = _call("uses_scratch", Tensor((2,), "float32"))  # unknown values fail only when used
    assert isinstance(unknown, Unknown) and unknown.reason == "'scratch' is assigned in a loop"
    with pytest.raises(CannotRead, match="wrapper\\(\\) is not given its argument 'w'"):
        _call("wrapper", Tensor((2, 2), "float32"))


def test_torch_rules_follow_torch() -> None:
    a, b = Tensor((2, 3, 4), "float16"), Tensor((2, 4, 5), "bfloat16")
    assert torch_rules.matmul(a, b) == Tensor((2, 3, 5), "float32")
    assert torch_rules.call_torch("torch.softmax", [a], {"dim": -1}) == a
    assert torch_rules.call_method(a, "sum", [1], {"keepdim": True}) == Tensor((2, 1, 4), "float16")
    assert torch_rules.call_method(a, "argmax", [], {"dim": -1}) == Tensor((2, 3), "int64")
    assert torch_rules.call_method(a, "view", [-1, 4], {}) == Tensor((6, 4), "float16")
    assert torch_rules.call_method(a, "to", [DType("int8")], {}) == Tensor((2, 3, 4), "int8")
    made = Tensor((1, 2, 3), "float16")  # `q.new_empty(n, b, t)` and `q.new_empty((n, b, t))`
    assert torch_rules.call_method(a, "new_empty", [1, 2, 3], {}) == made
    assert torch_rules.call_method(a, "new_empty", [(1, 2, 3)], {}) == made
    new_full = torch_rules.call_method(a, "new_full", [(5, 2), 0.5], {"dtype": DType("float32")})
    assert new_full == Tensor((5, 2), "float32")
    assert torch_rules.index_tensor(a, (slice(None), None, 0)) == Tensor((2, 1, 4), "float16")
    assert torch_rules.call_torch("torch.cat", [[a, a]], {"dim": 1}) == Tensor((2, 6, 4), "float16")
    assert torch_rules.call_torch("torch.randint", [0, 10, (3, 2)], {}) == Tensor((3, 2), "int64")
    assert torch_rules.binary("div", Tensor((3,), "int32"), 2) == Tensor((3,), "float32")
    assert broadcast((3, 1), (4,)) == (3, 4) and promote("uint8", "int8") == "int16"
    with pytest.raises(CannotRead, match="do not broadcast"):
        broadcast((3,), (4,))
    with pytest.raises(CannotRead, match="torch.einsum"):
        torch_rules.call_torch("torch.einsum", ["ij->ji", a], {})


ARANGES = """
import torch


def ends(n, c):
    loc = torch.arange(n + 1, dtype=torch.int32) * c
    return int(loc[-1].item()), (loc - 1)[2].item(), (3 - loc)[1].item(), (torch.arange(2, 9, 3) + 1)[1].item()


def shifted(n):
    return (torch.arange(n) << 1)[1].item()


def wrapped(n):
    return torch.arange(n, dtype=torch.int8)[1].item()
"""


def test_the_values_of_an_integer_arange_are_known() -> None:
    interpreter = Interpreter()
    scope = module_scope(ast.parse(ARANGES), interpreter)
    assert interpreter.call_function(scope["ends"], [4, 16], {}) == (64, 31, -13, 6)  # type: ignore[arg-type]
    for name, n in (("shifted", 4), ("wrapped", 200)):  # not followed: a shift; values int8 cannot hold
        unknown = interpreter.call_function(scope[name], [n], {})  # type: ignore[arg-type]
        assert isinstance(unknown, Unknown) and unknown.reason == "a tensor's value (.item())"


def test_an_if_whose_test_cannot_be_read_keeps_what_either_branch_leaves_alike() -> None:
    """vLLM's `if a.stride(-1) != 1 ...: a = a.contiguous()`: a tensor of a's shape and dtype after
    either branch, so the reading keeps it; `b`, a float32 copy in one branch only, is unknown."""
    returned = _call("made_contiguous", Tensor((4, 8), "float16"), Tensor((2,), "float16"))
    assert isinstance(returned, tuple)
    a, b = returned
    assert a == Tensor((4, 8), "float16")
    assert isinstance(b, Unknown) and "'b' is assigned under an `if` whose test cannot be read" in b.reason
