"""Safe arithmetic over case dims, for the FLOP and byte formulas of a task.

A formula is a Python expression limited to numbers, dim names, `esize` (bytes per element of
the case dtype), + - * / // ** and parentheses. It is parsed with `ast` and walked here:
never passed to eval, so a BUILD file cannot run code through it.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Callable, Mapping

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[float], float]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
# Bytes per element of each dtype: the value of `esize` for a case.
ELEMENT_SIZES: Mapping[str, int] = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "bool": 1,
}
# Exponents beyond this are certainly a mistake, and 10**10**10 would hang the loader.
_MAX_EXPONENT = 64


class FormulaError(ValueError):
    """A formula does not parse, names an unknown variable, or cannot be evaluated."""


def evaluate_formula(expr: str, dims: Mapping[str, int], esize: int) -> float:
    """The value of `expr` with dim names bound to `dims` and `esize` to `esize`."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as error:
        raise FormulaError(f"formula {expr!r} does not parse: {error.msg}") from None
    names = dict(dims)
    names["esize"] = esize
    try:
        value = _evaluate(tree.body, names, expr)
    except (ZeroDivisionError, OverflowError) as error:
        raise FormulaError(f"formula {expr!r} cannot be evaluated: {error}") from None
    result = float(value)
    if not math.isfinite(result):
        raise FormulaError(f"formula {expr!r} is not finite")
    return result


def _evaluate(node: ast.AST, names: Mapping[str, int], expr: str) -> float:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise FormulaError(f"formula {expr!r}: {node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise FormulaError(f"formula {expr!r} uses {node.id!r}, which is neither a dim nor esize")
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, names, expr))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, names, expr)
        right = _evaluate(node.right, names, expr)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise FormulaError(f"formula {expr!r}: exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    raise FormulaError(f"formula {expr!r}: {type(node).__name__} is not allowed (only + - * / // ** and parentheses)")
