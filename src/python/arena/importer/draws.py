"""How a test draws an input tensor, as an arena distribution (docs/task-format.md, "Inputs").

Recognised: torch.randn / rand / randint / zeros / ones / full, scaled and shifted by constants
(`torch.randn(...) * 0.1` is normal with std 0.1, `torch.rand(...) * 2 + 0.1` uniform on
[0.1, 2.1)), optionally followed by .to(dtype), .contiguous() or .clone(). Anything else (arange,
randperm, cumsum, values built in a loop) matches no distribution, and the task is not imported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable

from arena.importer.outcome import NotImportable

_DRAWS = ("randn", "rand", "randint", "zeros", "ones", "full")
_PASS_THROUGH = ("contiguous", "clone", "to")
_KEYWORDS = {"dtype", "device"}  # what else a draw is given changes its values or is not modelled


@dataclass(frozen=True)
class Draw:
    """A recognised draw: the torch call, and the constants applied after it."""

    call: ast.Call  # torch.<kind>(...)
    kind: str  # one of _DRAWS
    scale: ast.expr | None  # `* scale`, or None
    offset: ast.expr | None  # `+ offset` (or `- offset`, negated when read), or None
    negate_offset: bool
    size_args: list[ast.expr]  # the size, one expression per axis or one tuple expression


def find_draw(name: str, value: ast.expr) -> Draw:
    """The draw `name = value` makes; NotImportable naming the expression when it is none."""
    node = _strip_methods(value)
    scale: ast.expr | None = None
    offset: ast.expr | None = None
    negate = False
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        offset, negate = node.right, isinstance(node.op, ast.Sub)
        node = _strip_methods(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        product = node
        if _torch_call(product.right) and not _torch_call(product.left):
            node, scale = _strip_methods(product.right), product.left
        else:
            node, scale = _strip_methods(product.left), product.right
    call = _torch_call(node)
    if call is None:
        raise NotImportable(f"input {name!r} is `{_short(value)}`, which no arena distribution matches")
    kind = call.func.attr  # type: ignore[attr-defined]
    unknown = sorted({k.arg or "**" for k in call.keywords} - _KEYWORDS)
    if unknown:
        raise NotImportable(f"input {name!r} is drawn with {', '.join(unknown)}=, which arena does not model")
    if kind == "randint" and (scale is not None or offset is not None):
        raise NotImportable(f"input {name!r} scales or shifts random integers, which no distribution matches")
    # torch.full(size, value) and torch.randint([low,] high, size): the size is one argument.
    size_args = list(call.args[:1] if kind == "full" else call.args[-1:] if kind == "randint" else call.args)
    return Draw(call, kind, scale, offset, negate, size_args)


def distribution(draw: Draw, name: str, constant: Callable[[ast.expr], Any]) -> dict[str, Any]:
    """The arena distribution of `draw`; `constant` reads an expression that must be the same
    number in every case (NotImportable otherwise). A randint bound that varies by case is
    returned as the expression, for the caller to turn into a dim."""
    scale = 1.0 if draw.scale is None else _number(constant(draw.scale), name)
    offset = 0.0 if draw.offset is None else _number(constant(draw.offset), name) * (-1 if draw.negate_offset else 1)
    if draw.kind == "randn":
        if scale <= 0:
            raise NotImportable(f"input {name!r} scales a normal draw by {scale}")
        return _without_defaults({"kind": "normal", "mean": offset, "std": scale}, mean=0.0, std=1.0)
    if draw.kind == "rand":
        low, high = sorted((offset, offset + scale))
        if low == high:
            return {"kind": "constant", "value": low}
        return _without_defaults({"kind": "uniform", "low": low, "high": high}, low=0.0, high=1.0)
    if draw.kind == "randint":
        bounds = list(draw.call.args[:-1])
        if len(bounds) not in (1, 2):
            raise NotImportable(f"input {name!r}: torch.randint without its bounds as arguments")
        low = 0 if len(bounds) == 1 else _integer(constant(bounds[0]), name)
        return {"kind": "randint", "low": low, "high": bounds[-1]}
    fill = {"zeros": 0.0, "ones": 1.0}.get(draw.kind)
    if fill is None:  # torch.full(size, value)
        if len(draw.call.args) < 2:
            raise NotImportable(f"input {name!r}: torch.full without its value as an argument")
        fill = _number(constant(draw.call.args[1]), name)
    return {"kind": "constant", "value": fill * scale + offset}


def _torch_call(node: ast.expr) -> ast.Call | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DRAWS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "torch"
    ):
        return node
    return None


def _strip_methods(node: ast.expr) -> ast.expr:
    """`x.contiguous()`, `x.clone()` and `x.to(...)` draw what x draws (the dtype is read elsewhere)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PASS_THROUGH:
        node = node.func.value
    return node


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NotImportable(f"input {name!r} is drawn with {value!r} where a number is needed")
    return float(value)


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotImportable(f"input {name!r} is drawn with {value!r} where an integer is needed")
    return value


def _without_defaults(dist: dict[str, Any], **defaults: float) -> dict[str, Any]:
    return {key: value for key, value in dist.items() if defaults.get(key) != value}


def _short(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."
