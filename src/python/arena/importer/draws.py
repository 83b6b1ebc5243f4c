"""How a test draws an input tensor, as an arena distribution (docs/task-format.md, "Inputs").

Recognised: torch.randn / rand / randint / zeros / ones / full / arange, scaled, negated and
shifted by constants (`torch.randn(...) * 0.1` is normal with std 0.1, `torch.rand(...) * 2 + 0.1`
uniform on [0.1, 2.1), `-torch.rand(...) * 0.5` uniform on [-0.5, 0), `torch.arange(n) * 2 + 1`
an arange from 1 by 2, `torch.arange(n * p) % p` an arange of period p: 0 .. p-1 in each row,
`torch.arange(n) // d` an arange of divisor d: each value d times),
and `torch.randperm(n)[:k]` (a permutation of [0, n), its first k),
optionally followed by .to(dtype), .contiguous() or .clone(). The magnitude of a normal draw
centred on 0 (`torch.randn(...).abs() * 0.1 + 0.01`) is `half_normal`; the running sums of a draw
along one axis (`torch.randn(...).cumsum(1) * 0.01`, `torch.cumsum(torch.rand(...) * -0.1, dim=-1)`)
are `cumsum` of that draw's kind. `torch.tensor(<a list of numbers>, dtype=...)` is a `values`
literal, the list itself (arena/task/literal.py), and a cumsum of one of integers the literal of its
running sums. Anything else (a cumsum of another input, values built in a loop) matches no
distribution, and the task is not imported.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable

from arena.importer.calls import is_call_with_one_argument
from arena.importer.outcome import NotDrawn, NotImportable
from arena.task import literal, mapped
from arena.task.checks import FieldError
from arena.task.vectors import BASE_KINDS

_DRAWS = ("randn", "rand", "randint", "zeros", "ones", "full", "arange", "randperm", "empty", "tensor")
# torch.<kind>_like(x[, value]): x's shape and dtype (read elsewhere), the draw of <kind>.
_LIKE = ("randn", "rand", "randint", "zeros", "ones", "full", "empty")
# `.requires_grad_()` and `requires_grad=` change no value (a test that differentiates is refused:
# arena.importer.autograd_apply.refuse_gradients)
_PASS_THROUGH = ("contiguous", "clone", "to", "requires_grad_")
INTEGER_DTYPES = frozenset(
    f"torch.{name}" for name in ("int8", "int16", "int32", "int64", "uint8", "int", "long", "short")
)
_KEYWORDS = {"dtype", "device", "requires_grad"}  # what else a draw is given changes its values or is not modelled
_WRAPPERS = ("abs", "cumsum")  # x.abs(), torch.abs(x), x.cumsum(d), torch.cumsum(x, dim=d) of a draw x


@dataclass(frozen=True)
class Wrapped:
    """`.abs()` or `.cumsum(dim)` of a draw, and the constants applied after it."""

    how: str  # one of _WRAPPERS
    dim: ast.expr | None  # the cumsum's axis
    scale: ast.expr | None
    offset: ast.expr | None
    negate_offset: bool
    negate: bool


@dataclass(frozen=True)
class Draw:
    """A recognised draw: the torch call, and the constants applied after it."""

    call: ast.Call  # torch.<kind>(...)
    kind: str  # one of _DRAWS
    scale: ast.expr | None  # `* scale`, or None
    offset: ast.expr | None  # `+ offset` (or `- offset`, negated when read), or None
    negate_offset: bool
    size_args: list[ast.expr]  # the size, one expression per axis or one tuple expression
    negate: bool = False  # `-torch.rand(...)`: the draw is negated before it is scaled
    first: ast.expr | None = None  # `torch.randperm(n)[:k]`: k, the elements kept
    wrapped: Wrapped | None = None  # the draw's magnitude or running sums, then scaled and shifted
    period: ast.expr | None = None  # `torch.arange(n) % p`: p, the length of each row's range
    divisor: ast.expr | None = None  # `torch.arange(n) // d` (after `% p`): d equal values each
    source: str | None = None  # `torch.cumsum(dt * c, dim=d)` of another tensor: its name (kind cumsum_of)
    maps: tuple[str, ...] = ()  # `torch.randn(...).sigmoid().log()`: the maps applied to the draw, in order


def find_draw(name: str, value: ast.expr) -> Draw:
    """The draw `name = value` makes; NotImportable naming the expression when it is none. Read
    from outside in: elementwise maps, an offset and a scale, a period or divisor, a negation, a
    wrapper (a cumsum, a sort, ...), then the torch call (sliced, transposed or reshaped)."""
    node = _strip_methods(_spelled_plainly(value))
    maps: list[str] = []
    while (applied := _map(node)) is not None:  # `x.sigmoid().log()`: log, then sigmoid, read from outside in
        maps.insert(0, applied[0])
        node = _strip_methods(applied[1])
    if maps:
        drawn = find_draw(name, node)
        if drawn.kind == "cumsum_of":
            raise NotDrawn(f"input {name!r} is `{_short(value)}`, a {maps[0]} of another tensor's running sums")
        return dataclasses.replace(drawn, maps=tuple(maps))
    node, scale, offset, negate_offset = _affine(node)
    node, period, divisor = _periodic(node, name, value)
    negate = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, negate = _strip_methods(node.operand), True
    wrapper = _wrapper(node)
    if wrapper is not None:
        return _wrapped_draw(
            name, value, node, wrapper, Wrapped(wrapper[0], wrapper[2], scale, offset, negate_offset, negate)
        )
    first: ast.expr | None = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        cut = node.slice
        if cut.lower is None and cut.step is None and cut.upper is not None and _torch_call(_strip_methods(node.value)):
            node, first = _strip_methods(node.value), cut.upper
    swapped = _transposed(node)
    if swapped is not None:  # `torch.randn((K, N)).T`: the same draw of the transposed shape
        node = _strip_methods(swapped[0])
    reshaped = _reshaped_arange(node)
    if reshaped is not None:  # torch.arange(a * b).reshape(a, b): start + step * i over the flattened tensor
        node = _strip_methods(reshaped.func.value)  # type: ignore[attr-defined]
    call = _torch_call(node)
    if call is None:
        raise NotDrawn(f"input {name!r} is `{_short(value)}`, which no arena distribution matches")
    kind = call.func.attr.removesuffix("_like")  # type: ignore[attr-defined]
    unknown = sorted({k.arg or "**" for k in call.keywords} - _KEYWORDS)
    if unknown:
        raise NotDrawn(f"input {name!r} is drawn with {', '.join(unknown)}=, which arena does not model")
    if kind in ("randint", "randperm") and (scale is not None or offset is not None or negate):
        raise NotDrawn(f"input {name!r} scales or shifts random integers, which no distribution matches")
    if (first is not None) != (kind == "randperm"):
        shown = "a slice of a draw" if first is not None else "a whole torch.randperm"
        raise NotDrawn(f"input {name!r} is {shown} (`{_short(value)}`), which no arena distribution matches")
    size_args = _size_args(call, kind, reshaped, first)
    if swapped is not None:
        size_args = _swap_axes(size_args, swapped[1], kind, first, period, divisor, name, value)
    return Draw(call, kind, scale, offset, negate_offset, size_args, negate, first, period=period, divisor=divisor)


def _affine(node: ast.expr) -> tuple[ast.expr, ast.expr | None, ast.expr | None, bool]:
    """(what is left, its scale, its offset, whether the offset is taken off): `<draw> * s + o`,
    `s * <draw> - o` (the factor that draws nothing is the scale)."""
    scale: ast.expr | None = None
    offset: ast.expr | None = None
    negate_offset = False
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        offset, negate_offset = node.right, isinstance(node.op, ast.Sub)
        node = _strip_methods(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        product = node
        if _drawn(product.right) and not _drawn(product.left):
            node, scale = _strip_methods(product.right), product.left
        else:
            node, scale = _strip_methods(product.left), product.right
    return node, scale, offset, negate_offset


def _periodic(node: ast.expr, name: str, value: ast.expr) -> tuple[ast.expr, ast.expr | None, ast.expr | None]:
    """(what is left, its period, its divisor): `torch.arange(n) // d` (d each), `torch.arange(n) % p`
    (0 .. p-1 per row), of a torch.arange alone."""
    period: ast.expr | None = None
    divisor: ast.expr | None = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        node, divisor = _strip_methods(node.left), node.right  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node, period = _strip_methods(node.left), node.right  # type: ignore[attr-defined]
    if period is not None or divisor is not None:
        reshaped = _reshaped_arange(node)
        arange = _torch_call(_strip_methods(reshaped.func.value) if reshaped else node)  # type: ignore[attr-defined]
        if not is_call_with_one_argument(arange, "torch.arange"):
            raise NotDrawn(f"input {name!r} is `{_short(value)}`, which no arena distribution matches")
    return node, period, divisor


def _wrapped_draw(
    name: str, value: ast.expr, node: ast.expr, wrapper: tuple[str, ast.expr, ast.expr | None], wrapped: Wrapped
) -> Draw:
    """The draw of `wrapper`'s operand, `wrapped` around it; or, for a cumsum of a tensor no
    distribution draws, its running sums (cumsum_of), computed from it."""
    how, operand, _ = wrapper
    try:
        base = find_draw(name, operand)
    except NotImportable:
        base = None
    summed = _scaled_name(operand) if base is None and how == "cumsum" else None
    if summed is not None:
        assert isinstance(node, ast.Call)  # the cumsum itself: no torch draw of its own
        return Draw(node, "cumsum_of", summed[1], None, False, [], source=summed[0], wrapped=wrapped)
    if base is None or base.wrapped is not None:
        raise NotDrawn(
            f"input {name!r} is `{_short(value)}`, the {how} of `{_short(operand)}`, which no arena "
            "distribution draws (arena draws each input on its own)"
        ) from None
    return dataclasses.replace(base, wrapped=wrapped)


def _size_args(call: ast.Call, kind: str, reshaped: ast.Call | None, first: ast.expr | None) -> list[ast.expr]:
    """The expressions of the draw's sizes. torch.full(size, value) and torch.randint([low,] high,
    size): the size is one argument; torch.arange(end) is its own size; torch.randperm(n)[:k] has k
    elements; a `_like` draw has the other tensor's shape (torch.full_like(x, v) has v where
    torch.full has it)."""
    if call.func.attr.endswith("_like"):  # type: ignore[attr-defined]
        return []
    if kind == "full":
        return list(call.args[:1])
    if kind == "randint":
        return list(call.args[-1:])
    if kind == "arange" and reshaped is not None:
        return list(reshaped.args)
    if kind == "arange":
        return list(call.args[:1]) if len(call.args) == 1 else []
    if first is not None:
        return [first]
    if kind == "tensor":  # torch.tensor(<list>): the list's shape, matched to the case's dims by the caller
        return []
    return list(call.args)


def _transposed(node: ast.expr) -> tuple[ast.expr, tuple[int, int] | None] | None:
    """(the tensor, the two axes swapped; None for all axes reversed) of `x.T`, `x.t()`,
    `x.transpose(a, b)` or `torch.transpose(x, a, b)` (a and b int literals); None otherwise."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return node.value, None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.keywords:
        return None
    args = node.args
    if node.func.attr == "transpose" and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        tensor, args = (args[0], args[1:]) if args else (node, [])
    elif node.func.attr in ("t", "transpose"):
        tensor = node.func.value
    else:
        return None
    if node.func.attr == "t" and not args:
        return tensor, None
    axes = [_int_literal(a) for a in args]
    if len(axes) == 2 and axes[0] is not None and axes[1] is not None:
        return tensor, (axes[0], axes[1])
    return None


def _int_literal(node: ast.expr) -> int | None:
    """`1` or `-1` as the int; None for anything else."""
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if isinstance(node, ast.UnaryOp) and negated else node
    if isinstance(inner, ast.Constant) and type(inner.value) is int:
        return -inner.value if negated else inner.value
    return None


def _swap_axes(
    size_args: list[ast.expr],
    axes: tuple[int, int] | None,
    kind: str,
    first: ast.expr | None,
    period: ast.expr | None,
    divisor: ast.expr | None,
    name: str,
    value: ast.expr,
) -> list[ast.expr]:
    """The size expressions of a transposed draw, in the transposed order. Only a draw whose elements
    are drawn alike and apart (normal, uniform, randint, a constant): its transpose is the same
    distribution on the transposed shape, which arena draws contiguous. An arange, a literal, a
    permutation's prefix are laid out by position, and are refused."""
    if kind not in ("randn", "rand", "randint", "zeros", "ones", "full", "empty") or first or period or divisor:
        raise NotDrawn(f"input {name!r} is `{_short(value)}`, a transposed {kind}, which no arena distribution matches")
    sizes = (
        list(size_args[0].elts)
        if len(size_args) == 1 and isinstance(size_args[0], (ast.Tuple, ast.List))
        else size_args
    )
    if not sizes:  # torch.randn_like(x).T: the axes are read from the shape alone
        return size_args
    if axes is None:
        return sizes[::-1]
    a, b = (axis % len(sizes) if -len(sizes) <= axis < len(sizes) else None for axis in axes)
    if a is None or b is None:
        raise NotDrawn(f"input {name!r} is `{_short(value)}`, transposed along an axis it does not have")
    sizes[a], sizes[b] = sizes[b], sizes[a]
    return sizes


def distribution(draw: Draw, name: str, constant: Callable[[ast.expr], Any]) -> dict[str, Any]:
    """The arena distribution of `draw`; `constant` reads an expression that must be the same
    number in every case (NotImportable otherwise). A randint bound and an arange's period are
    returned as the expression, for the caller to turn into a dim (or an int)."""
    if draw.maps:
        return with_mapped(distribution(dataclasses.replace(draw, maps=()), name, constant), name, then=draw.maps)
    if draw.kind == "cumsum_of":
        return _cumsum_of(draw, name, constant)
    if draw.wrapped is not None:
        return _wrapped(draw, draw.wrapped, name, constant)
    scale = (1.0 if draw.scale is None else _number(constant(draw.scale), name)) * (-1 if draw.negate else 1)
    offset = 0.0 if draw.offset is None else _number(constant(draw.offset), name) * (-1 if draw.negate_offset else 1)
    if draw.kind == "randn":  # a normal draw negated is the same distribution: std is |scale|
        if scale == 0:
            raise NotDrawn(f"input {name!r} scales a normal draw by 0")
        return _without_defaults({"kind": "normal", "mean": offset, "std": abs(scale)}, mean=0.0, std=1.0)
    if draw.kind == "rand":
        low, high = sorted((offset, offset + scale))
        if low == high:
            return {"kind": "constant", "value": low}
        return _without_defaults({"kind": "uniform", "low": low, "high": high}, low=0.0, high=1.0)
    if draw.kind == "randint":
        like = draw.call.func.attr.endswith("_like")  # type: ignore[attr-defined]
        bounds = list(draw.call.args[1:] if like else draw.call.args[:-1])
        if len(bounds) not in (1, 2):
            raise NotDrawn(f"input {name!r}: torch.randint without its bounds as arguments")
        low = 0 if len(bounds) == 1 else _integer(constant(bounds[0]), name)
        return {"kind": "randint", "low": low, "high": bounds[-1]}
    if draw.kind == "randperm":  # torch.randperm(n)[:k]: k distinct integers of [0, n)
        if len(draw.call.args) != 1:
            raise NotDrawn(f"input {name!r}: torch.randperm without its one bound as an argument")
        return {"kind": "permutation", "low": 0, "high": draw.call.args[0]}
    if draw.kind == "arange":
        return _arange(draw, name, constant, scale, offset)
    if draw.kind == "tensor":  # torch.tensor(<a list>): its values, as a literal
        if draw.scale is not None or draw.offset is not None or draw.negate:
            raise NotDrawn(f"input {name!r} scales or shifts a torch.tensor of a list; arena holds its values only")
        return {"kind": literal.KIND, "values": _literal(draw, name, constant)}
    # torch.empty holds whatever the memory held: no test can rely on it, and 0 is one such value.
    fill = {"zeros": 0.0, "ones": 1.0, "empty": 0.0}.get(draw.kind)
    if fill is None:  # torch.full(size, value)
        if len(draw.call.args) < 2:
            raise NotDrawn(f"input {name!r}: torch.full without its value as an argument")
        fill = _number(constant(draw.call.args[1]), name)
    return {"kind": "constant", "value": fill * scale + offset}


def _wrapped(draw: Draw, wrapped: Wrapped, name: str, constant: Callable[[ast.expr], Any]) -> dict[str, Any]:
    """|draw| * scale + offset (half_normal) or cumsum(draw, dim) * scale (cumsum of the scaled draw)."""
    base = distribution(dataclasses.replace(draw, wrapped=None), name, constant)
    factor = (1.0 if wrapped.scale is None else _number(constant(wrapped.scale), name)) * (-1 if wrapped.negate else 1)
    offset = 0.0
    if wrapped.offset is not None:
        offset = _number(constant(wrapped.offset), name) * (-1 if wrapped.negate_offset else 1)
    if base["kind"] == literal.KIND:
        return _wrapped_literal(base["values"], wrapped, name, constant, factor, offset)
    if wrapped.how == "abs":
        if base["kind"] != "normal" or base.get("mean", 0.0) != 0.0:
            raise NotDrawn(f"input {name!r} is the magnitude of a draw other than a normal one centred on 0")
        if factor <= 0:
            raise NotDrawn(f"input {name!r} scales a half-normal draw by {factor:g}, which no distribution matches")
        half = {"kind": "half_normal", "std": float(base.get("std", 1.0)) * factor, "low": offset}
        return _without_defaults(half, std=1.0, low=0.0)
    if offset != 0:
        raise NotDrawn(f"input {name!r} shifts a cumulative sum, which no arena distribution draws")
    dim = constant(wrapped.dim) if wrapped.dim is not None else None
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise NotDrawn(f"input {name!r} is a cumulative sum along {dim!r}, not one axis")
    summed = _scaled(base, factor, name)
    if summed["kind"] not in BASE_KINDS:
        raise NotDrawn(
            f"input {name!r} is a cumulative sum of {summed['kind']} values; arena sums {', '.join(BASE_KINDS)} draws"
        )
    return {"kind": "cumsum", "base": summed.pop("kind"), "dim": dim, **summed}


def with_mapped(
    dist: dict[str, Any], name: str, then: tuple[str, ...] = (), normalize: int | None = None
) -> dict[str, Any]:
    """`dist` with the maps `then` applied after its draw, or normalized along the axis `normalize`
    (arena/task/mapped.py); NotImportable where arena would refuse it (a log of values that can be
    0 or less, a draw of another kind, a sum of values that can be negative)."""
    added: dict[str, Any] = {mapped.THEN: [*dist.get(mapped.THEN, ()), *then]} if then else {}
    if normalize is not None:
        added[mapped.NORMALIZE] = normalize
    if dist["kind"] not in mapped.KINDS or mapped.NORMALIZE in dist:
        what = "maps" if then else "normalizes"
        raise NotDrawn(
            f"input {name!r} {what} a {dist['kind']} draw{' already normalized' if mapped.NORMALIZE in dist else ''}; "
            f"arena maps and normalizes {', '.join(mapped.KINDS)} draws"
        )
    result = {**dist, **added}
    try:
        mapped.check("inputs", result["kind"], result, f"input {name!r}")
    except FieldError as error:
        raise NotDrawn(str(error).removeprefix("field 'inputs': ")) from None
    return result


def _literal(draw: Draw, name: str, constant: Callable[[ast.expr], Any]) -> list[Any]:
    """The list torch.tensor(<list>, dtype=...) is given, read as numbers (the same in every case,
    or each case's own: the reader's _Differs); NotImportable for anything arena cannot hold exactly."""
    if len(draw.call.args) != 1 or any(k.arg not in ("dtype", "device") for k in draw.call.keywords):
        raise NotDrawn(f"input {name!r}: torch.tensor without its data as the one argument")
    values = constant(draw.call.args[0])
    shape = _literal_shape(values)
    if shape is None:
        raise NotDrawn(
            f"input {name!r} is torch.tensor of `{_short(draw.call.args[0])}`, not a list of numbers (or of such lists)"
        )
    if math.prod(shape) > literal.MAX_VALUES:
        raise NotDrawn(
            f"input {name!r} is torch.tensor of {math.prod(shape)} values, more than the {literal.MAX_VALUES} "
            "a literal holds"
        )
    return _as_lists(values)


def _literal_shape(values: Any) -> tuple[int, ...] | None:
    """The shape of a non-empty rectangular nest of lists of numbers (no bools); None otherwise."""
    if not isinstance(values, (list, tuple)) or not values:
        return None
    if all(isinstance(v, (list, tuple)) for v in values):
        shapes = {_literal_shape(v) for v in values}
        inner = shapes.pop() if len(shapes) == 1 else None
        return None if inner is None else (len(values), *inner)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) == math.inf for v in values):
        return None
    return (len(values),)


def _as_lists(values: Any) -> Any:
    return [_as_lists(v) for v in values] if isinstance(values, (list, tuple)) else values


def _wrapped_literal(
    values: list[Any], wrapped: Wrapped, name: str, constant: Callable[[ast.expr], Any], factor: float, offset: float
) -> dict[str, Any]:
    """torch.cumsum(torch.tensor(<ints>), dim=d): the running sums, computed here exactly (integers
    only: a float tensor's sums are rounded as torch adds, which this reading does not repeat)."""
    if wrapped.how != "cumsum" or factor != 1 or offset != 0:
        raise NotDrawn(f"input {name!r} is the {wrapped.how} of a torch.tensor of a list, scaled or shifted")
    if any(not isinstance(v, int) for v in _flat(values)):
        raise NotDrawn(f"input {name!r} is the cumulative sum of float values, which arena would round otherwise")
    dim = constant(wrapped.dim) if wrapped.dim is not None else None
    rank = len(_literal_shape(values) or ())
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise NotDrawn(f"input {name!r} is a cumulative sum along {dim!r}, not one axis of its {rank} axes")
    return {"kind": literal.KIND, "values": _running_sums(values, dim % rank)}


def _flat(values: Any) -> list[Any]:
    return [x for v in values for x in _flat(v)] if isinstance(values, list) else [values]


def _running_sums(values: list[Any], dim: int) -> list[Any]:
    if dim > 0:
        return [_running_sums(v, dim - 1) for v in values]
    sums: list[Any] = []
    for row in values:
        sums.append(row if not sums else _added(sums[-1], row))
    return sums


def _added(a: Any, b: Any) -> Any:
    return [_added(x, y) for x, y in zip(a, b)] if isinstance(a, list) else a + b


def _cumsum_of(draw: Draw, name: str, constant: Callable[[ast.expr], Any]) -> dict[str, Any]:
    """`torch.cumsum(dt * a, dim=d) * b`: the running sums of the tensor dt times a * b, along d."""
    wrapped = draw.wrapped
    assert wrapped is not None and draw.source is not None
    if wrapped.offset is not None:
        raise NotDrawn(f"input {name!r} shifts a cumulative sum, which no arena distribution draws")
    factor = 1.0 if draw.scale is None else _number(constant(draw.scale), name)
    factor *= (1.0 if wrapped.scale is None else _number(constant(wrapped.scale), name)) * (-1 if wrapped.negate else 1)
    dim = constant(wrapped.dim) if wrapped.dim is not None else None
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise NotDrawn(f"input {name!r} is a cumulative sum along {dim!r}, not one axis")
    summed = {"kind": "cumsum_of", "input": draw.source, "dim": dim, "scale": factor}
    return summed if factor != 1 else {key: value for key, value in summed.items() if key != "scale"}


def _scaled_name(node: ast.expr) -> tuple[str, ast.expr | None] | None:
    """(name, factor) of `name`, `name * c` or `c * name` (c read later as a number); else None."""
    node = _strip_methods(node)
    if isinstance(node, ast.Name):
        return node.id, None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _strip_methods(node.left), _strip_methods(node.right)
        if isinstance(left, ast.Name) and not isinstance(right, ast.Name):
            return left.id, node.right
        if isinstance(right, ast.Name) and not isinstance(left, ast.Name):
            return right.id, node.left
    return None


def _scaled(dist: dict[str, Any], factor: float, name: str) -> dict[str, Any]:
    """The distribution of a draw of `dist` times `factor` (a cumsum scaled after summing)."""
    if factor == 1:
        return dict(dist)
    if dist["kind"] == "normal":
        scaled = {"kind": "normal", "mean": dist.get("mean", 0.0) * factor, "std": dist.get("std", 1.0) * abs(factor)}
        return _without_defaults(scaled, mean=0.0, std=1.0)
    if dist["kind"] == "uniform":
        low, high = sorted((dist.get("low", 0.0) * factor, dist.get("high", 1.0) * factor))
        return _without_defaults({"kind": "uniform", "low": low, "high": high}, low=0.0, high=1.0)
    if dist["kind"] == "constant":
        return {"kind": "constant", "value": dist["value"] * factor}
    raise NotDrawn(f"input {name!r} scales the cumulative sum of a {dist['kind']} draw by {factor:g}")


def normalized_axis(name: str, value: ast.expr) -> ast.expr | None:
    """The axis of `name / name.sum(d, keepdim=True)` (or `torch.sum(name, dim=d, keepdim=True)`):
    `name`'s earlier values divided by their sums along d; None for any other expression."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div)):
        return None
    left, right = _strip_methods(value.left), _strip_methods(value.right)
    if not (isinstance(left, ast.Name) and left.id == name and isinstance(right, ast.Call)):
        return None
    func, args = right.func, list(right.args)
    if not (isinstance(func, ast.Attribute) and func.attr == "sum"):
        return None
    if isinstance(func.value, ast.Name) and func.value.id == "torch":
        summed = args.pop(0) if args else None
    else:
        summed = func.value
    if not (isinstance(summed, ast.Name) and summed.id == name):
        return None
    keywords = {k.arg: k.value for k in right.keywords}
    keep = keywords.pop("keepdim", None)
    axes = args + ([keywords.pop("dim")] if "dim" in keywords else [])
    if keywords or len(axes) != 1 or not (isinstance(keep, ast.Constant) and keep.value is True):
        return None
    return axes[0]


def _map(node: ast.expr) -> tuple[str, ast.expr] | None:
    """(map, operand) of `x.sigmoid()`, `torch.sigmoid(x)`, and log and exp likewise (mapped.MAPS)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in mapped.MAPS):
        return None
    if node.keywords:
        return None
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        return (node.func.attr, node.args[0]) if len(node.args) == 1 else None
    return (node.func.attr, node.func.value) if not node.args else None


def _wrapper(node: ast.expr) -> tuple[str, ast.expr, ast.expr | None] | None:
    """(how, operand, dim) of `x.abs()`, `torch.abs(x)`, `x.cumsum(d)`, `torch.cumsum(x, dim=d)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRAPPERS):
        return None
    how = node.func.attr
    args = list(node.args)
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        if not args:
            return None
        operand = args.pop(0)
    else:
        operand = node.func.value
    dims = args + [k.value for k in node.keywords if k.arg == "dim"]
    if any(k.arg != "dim" for k in node.keywords) or len(dims) != (how == "cumsum"):
        return None
    return how, _strip_methods(operand), dims[0] if dims else None


def _arange(draw: Draw, name: str, constant: Callable[[ast.expr], Any], scale: float, offset: float) -> dict[str, Any]:
    """torch.arange([start,] end[, step]) * scale + offset: start + step * i, scaled and shifted."""
    arguments = draw.call.args
    if not 1 <= len(arguments) <= 3:
        raise NotDrawn(f"input {name!r}: torch.arange without its bounds as arguments")
    if any(k.arg in ("start", "end", "step") for k in draw.call.keywords):
        raise NotDrawn(f"input {name!r}: torch.arange with its bounds given by keyword")
    integer = any(k.arg == "dtype" and ast.unparse(k.value) in INTEGER_DTYPES for k in draw.call.keywords)
    if integer and not scale.is_integer():  # a fill loop read as an arange stores integers (fill_loops.py)
        raise NotDrawn(f"input {name!r} scales an integer torch.arange by {scale:g}, not an integer")
    start = 0.0 if len(arguments) == 1 else _number(constant(arguments[0]), name)
    step = 1.0 if len(arguments) < 3 else _number(constant(arguments[2]), name)
    first, stride = start * scale + offset, step * scale
    if stride == 0:
        return {"kind": "constant", "value": first}
    whole = {key: int(v) if v.is_integer() else v for key, v in (("start", first), ("step", stride))}
    sizes = {key: v for key, v in (("period", draw.period), ("divisor", draw.divisor)) if v is not None}
    return _without_defaults({"kind": "arange", **whole, **sizes}, start=0.0, step=1.0)  # the caller reads sizes


def _spelled_plainly(node: ast.expr) -> ast.expr:
    """The same draw in the spelling find_draw reads: `torch.empty(s).normal_(mean=m, std=d)` is
    `torch.randn(s) * d + m`, `torch.empty(s).uniform_(a, b)` is `torch.rand(s) * (b - a) + a`, and
    `torch.randint(low=a, high=b, size=s)` (or `randint_like(x, low=a, high=b)`) takes its bounds
    and size by position. Anything else is returned as it is."""
    inner = _strip_methods(node)
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in _FILLS:
        empty = _torch_call(_strip_methods(inner.func.value))
        if empty is not None and empty.func.attr == "empty":  # type: ignore[attr-defined]
            names = ("mean", "std") if inner.func.attr == "normal_" else ("from", "to")
            given = dict(zip(names, inner.args)) | {k.arg: k.value for k in inner.keywords if k.arg}
            if len(inner.args) > 2 or set(given) - set(names) or any(k.arg is None for k in inner.keywords):
                return node
            a = given.get(names[0], ast.Constant(0.0))
            b = given.get(names[1], ast.Constant(1.0))
            drawn = ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), _FILLS[inner.func.attr], ast.Load()), [], [])
            drawn.args, drawn.keywords = empty.args, empty.keywords
            width = b if inner.func.attr == "normal_" else ast.BinOp(b, ast.Sub(), a)
            return ast.fix_missing_locations(
                ast.copy_location(ast.BinOp(ast.BinOp(drawn, ast.Mult(), width), ast.Add(), a), node)
            )
    call = _torch_call(inner)
    if call is not None and call.func.attr in ("randint", "randint_like"):  # type: ignore[attr-defined]
        keywords = {k.arg: k.value for k in call.keywords if k.arg in ("low", "high", "size")}
        if keywords and "high" in keywords:
            like = call.func.attr == "randint_like"  # type: ignore[attr-defined]
            if (like and len(call.args) != 1) or (not like and (call.args or "size" not in keywords)):
                return node
            args = [*call.args, *([keywords["low"]] if "low" in keywords else []), keywords["high"]]
            args += [] if like else [keywords["size"]]
            rest = [k for k in call.keywords if k.arg not in keywords]
            return ast.fix_missing_locations(ast.copy_location(ast.Call(call.func, args, rest), node))
    return node


_FILLS = {"normal_": "randn", "uniform_": "rand"}  # an in-place fill of torch.empty, as the draw it is


def _torch_call(node: ast.expr) -> ast.Call | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr in _DRAWS or node.func.attr.removesuffix("_like") in _LIKE)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "torch"
    ):
        return node
    return None


def _drawn(node: ast.expr) -> bool:
    """A draw, or its magnitude or running sums: the factor of a product that is not the scale."""
    node = _strip_methods(node)
    return _torch_call(node) is not None or _wrapper(node) is not None


def _reshaped_arange(node: ast.expr) -> ast.Call | None:
    """`torch.arange(end, ...).reshape(a, b)` (or `.view`), its one bound the product of the new
    sizes (the interpreter checks the element count): the arange of the new shape, row-major."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("reshape", "view")
        and node.args
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        inner = _torch_call(_strip_methods(node.func.value))
        if is_call_with_one_argument(inner, "torch.arange"):
            return node
    return None


def _strip_methods(node: ast.expr) -> ast.expr:
    """`x.contiguous()`, `x.clone()` and `x.to(...)` draw what x draws (the dtype is read elsewhere)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PASS_THROUGH:
        node = node.func.value
    return node


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NotDrawn(f"input {name!r} is drawn with {value!r} where a number is needed")
    return float(value)


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotDrawn(f"input {name!r} is drawn with {value!r} where an integer is needed")
    return value


def _without_defaults(dist: dict[str, Any], **defaults: float) -> dict[str, Any]:
    return {key: value for key, value in dist.items() if defaults.get(key) != value}


def _short(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."
