"""What Python's own operators and builtins do to the values the reading holds (numbers, tuples),
for arena.importer.interpreter; torch's calls are arena.importer.torch_rules."""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Mapping

from arena.importer.values import CannotRead, Tensor, Unknown, describe

MAX_NUMBER = 2**96  # larger numbers are not sizes; refusing them bounds the arithmetic

NUMBER_OPS: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}  # fmt: skip
UNARY_OPS: Mapping[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert
}  # fmt: skip
COMPARE = {
    ast.Eq: ("eq", operator.eq), ast.NotEq: ("ne", operator.ne), ast.Lt: ("lt", operator.lt),
    ast.LtE: ("le", operator.le), ast.Gt: ("gt", operator.gt), ast.GtE: ("ge", operator.ge),
}  # fmt: skip
BUILTINS = ("len", "min", "max", "int", "float", "abs", "round", "sum", "tuple", "list", "bool", "print", "isinstance")


def number_op(node: ast.BinOp, left: Any, right: Any) -> Any:
    if isinstance(left, (tuple, list)) and isinstance(node.op, (ast.Add, ast.Mult)):
        if isinstance(node.op, ast.Add) and isinstance(right, (tuple, list)):
            return tuple(left) + tuple(right)
        if isinstance(node.op, ast.Mult) and isinstance(right, int) and 0 <= right <= 4096:
            return tuple(left) * right
    numbers = all(isinstance(v, (int, float)) for v in (left, right))
    if not numbers or (isinstance(node.op, ast.Pow) and abs(right) > 128):
        raise CannotRead(f"{describe(left)} {type(node.op).__name__} {describe(right)} (line {node.lineno})")
    if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= right <= 128:
        raise CannotRead(f"a shift by {right} (line {node.lineno})")
    try:
        result = NUMBER_OPS[type(node.op)](left, right)
    except (ZeroDivisionError, TypeError, ValueError, OverflowError) as error:
        raise CannotRead(f"arithmetic fails: {error} (line {node.lineno})") from None
    if isinstance(result, complex) or abs(result) > MAX_NUMBER:
        raise CannotRead(f"a number out of range (line {node.lineno})")
    return result


def call_builtin(name: str, args: list[Any]) -> Any:
    for value in args:
        if isinstance(value, Unknown):
            raise value.fail()
    if name == "len" and len(args) == 1:
        value = args[0]
        if isinstance(value, Tensor) and value.shape:
            return value.shape[0]
        if isinstance(value, (tuple, list, str)):
            return len(value)
    if name in ("min", "max") and args:
        items = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if items and all(isinstance(v, (int, float)) for v in items):
            return (min if name == "min" else max)(items)
    conversions: Mapping[str, Callable[[Any], Any]] = {
        "int": int, "float": float, "abs": abs, "round": round, "bool": bool
    }  # fmt: skip
    if name in conversions and len(args) == 1 and isinstance(args[0], (int, float)):
        return conversions[name](args[0])
    of_numbers = len(args) == 1 and isinstance(args[0], (tuple, list))
    if name == "sum" and of_numbers and all(isinstance(v, (int, float)) for v in args[0]):
        return sum(args[0])
    if name in ("tuple", "list") and len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    if name == "print":
        return None
    raise CannotRead(f"{name}() of {', '.join(describe(v) for v in args) or 'nothing'}")
