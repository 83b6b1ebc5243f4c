"""A call of a function or method as spelled, with exactly one positional argument
(arena.importer.calls): what many readers match before they read that argument."""

from __future__ import annotations

import ast

import pytest

from arena.importer.calls import is_call_with_one_argument


def _expression(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


@pytest.mark.parametrize(
    "source, callee",
    [
        ("int(x)", "int"),
        ("sum(counts)", "sum"),
        ("enumerate(cases, start=1)", "enumerate"),
        ("torch.arange(n, device=d)", "torch.arange"),
        ("torch.manual_seed(*seeds)", "torch.manual_seed"),
        ("x.to(device)", ".to"),
        ("f(a).b.to(device)", ".to"),
    ],
)
def test_a_call_of_the_callee_with_one_positional_argument(source: str, callee: str) -> None:
    assert is_call_with_one_argument(_expression(source), callee)


@pytest.mark.parametrize(
    "source, callee",
    [
        ("int()", "int"),
        ("int(x, 16)", "int"),
        ("int(x=1)", "int"),
        ("float(x)", "int"),
        ("math.int(x)", "int"),
        ("arange(n)", "torch.arange"),
        ("np.arange(n)", "torch.arange"),
        ("to(device)", ".to"),
        ("x.to_dense(d)", ".to"),
        ("x.to", ".to"),
        ("int", "int"),
    ],
)
def test_anything_else_is_not(source: str, callee: str) -> None:
    assert not is_call_with_one_argument(_expression(source), callee)


def test_no_node_is_not() -> None:
    assert not is_call_with_one_argument(None, "int")
