"""Other spellings of what the importer already reads (rocmbench's tests): an in-place fill of
torch.empty as the draw it is, torch.randint's bounds and size by keyword, and a dict of dtypes
looked up by a case value."""

from __future__ import annotations

import ast

import pytest

from arena.importer.draws import distribution, find_draw
from arena.importer.interpreter import Interpreter, Scope
from arena.importer.outcome import NotImportable
from arena.importer.values import CannotRead, DType


def _dist(source: str) -> dict[str, object]:
    draw = find_draw("x", ast.parse(source, mode="eval").body)
    return distribution(draw, "x", lambda node: eval(compile(ast.Expression(node), "<case>", "eval")))


def test_an_in_place_fill_of_empty_is_the_draw_it_makes() -> None:
    assert _dist("torch.empty((M, K), dtype=torch.float16).normal_(mean=0.1, std=0.2)") == {
        "kind": "normal",
        "mean": 0.1,
        "std": 0.2,
    }
    assert _dist("torch.empty(M).normal_()") == {"kind": "normal"}
    assert _dist("torch.empty(M).uniform_(-1.0, 3.0)") == {"kind": "uniform", "low": -1.0, "high": 3.0}
    with pytest.raises(NotImportable, match="which no arena distribution matches"):
        _dist("torch.ones(M).normal_(0.0, 2.0)")  # a fill of another tensor is read as nothing else
    with pytest.raises(NotImportable, match="generator"):
        _dist("torch.empty(M).normal_(0.0, 2.0, generator=g)")


def test_randint_by_keyword_is_randint() -> None:
    """torch.randint(low=, high=, size=) and randint_like(x, low=, high=): the bounds as the
    positional spelling's (the high bound is returned as the expression, for a dim or an int)."""
    plain = _dist("torch.randint(0, 2, (m, k))")
    keyword = _dist("torch.randint(low=0, high=2, size=(m, k), dtype=torch.float16)")
    like = _dist("torch.randint_like(b, low=0, high=2)")
    for dist in (plain, keyword, like):
        assert dist["kind"] == "randint" and dist["low"] == 0 and ast.unparse(dist["high"]) == "2"  # type: ignore[arg-type]
    assert ast.unparse(_dist("torch.randint_like(b, 7)")["high"]) == "7"  # type: ignore[arg-type]
    # Its shape is b's (no size expression of its own: axes are named by matching b's dims).
    assert find_draw("c", ast.parse("torch.randint_like(b, low=0, high=2)", mode="eval").body).size_args == []


def test_a_dict_of_dtypes_is_looked_up_by_its_key() -> None:
    interpreter = Interpreter()
    scope = Scope({"dtype_str": "float16"}, {})
    for line in ("import torch", "mapping = {'float16': torch.float16, 'float32': torch.float32}"):
        interpreter.run_statement(ast.parse(line).body[0], scope)
    assert interpreter.evaluate(ast.parse("mapping[dtype_str]", mode="eval").body, scope) == DType("float16")
    with pytest.raises(CannotRead, match="'bfloat16' is not in the dict"):
        interpreter.evaluate(ast.parse("mapping['bfloat16']", mode="eval").body, scope)
