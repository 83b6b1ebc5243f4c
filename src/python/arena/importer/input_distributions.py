"""An input's distribution, read from its draw: one for every case or each case's own, an integer
bound or an arange's period as a dim, and the draw masked to a triangle or written through a
mask."""

from __future__ import annotations

import ast
import math
from typing import Any, Callable

from arena.importer.calls import is_call_with_one_argument
from arena.importer.dims import Dims, is_int
from arena.importer.draws import Draw, distribution
from arena.importer.follow import FollowedCase, same_in_every_case
from arena.importer.input_assignments import MaskWrite
from arena.importer.outcome import NotDrawn, NotFollowed, NotHeld
from arena.importer.triangle import Triangle
from arena.importer.values import Tensor, Unknown, same_value
from arena.task import mapped
from arena.task.vectors import BASE_KINDS, MASKED_KINDS, NAN


def distributions(
    draw: Draw, name: str, cases: list[FollowedCase], shown: str
) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """The draw's distribution, and each case's own where a parameter differs between cases
    (`torch.full((b,), seq_len // 2)`: the first case's, each case's as its `dists` override)."""
    try:
        return distribution(draw, name, same_reader(cases, f"input {shown!r}:")), ()
    except _Differs:
        case_dists = tuple(distribution(draw, name, _case_reader(case, shown)) for case in cases)
        return dict(case_dists[0]), case_dists


def bounded(
    dist: dict[str, Any], case_dists: tuple[dict[str, Any], ...], cases: list[FollowedCase], dims: Dims
) -> tuple[dict[str, Any], ...]:
    """An integer draw's upper bound, in `dist`, as a dim, a number or (a bound no dim names that
    differs between cases, `max_tokens + 1`) each case's own number: validation moves an odd dim
    alone (variants.py), which would draw values past the sizes the bound was computed from."""
    if not (dist["kind"] in ("randint", "permutation") or dist.get("base") == "randint"):
        return case_dists
    high = _bound_values(cases, dims, dist["high"])
    if isinstance(high, list):
        dist["high"] = high[0]
        return tuple({**d, "high": h} for d, h in zip(case_dists or (dist,) * len(cases), high))
    dist["high"] = high
    return tuple({**d, "high": high} for d in case_dists)


def with_tril(dist: dict[str, Any], triangle: Triangle, shown: str) -> dict[str, Any]:
    _not_mapped(dist, shown, "masked to a triangle")
    if dist["kind"] not in BASE_KINDS:
        raise NotDrawn(
            f"input {shown!r} masks a {dist['kind']} draw to a triangle; arena masks {', '.join(BASE_KINDS)}"
        )
    own = {
        "rows": triangle.rows,
        "cols": triangle.cols,
        **({"diagonal": triangle.diagonal} if triangle.diagonal else {}),
    }
    return {"kind": "tril", "base": dist["kind"], **own, **{k: v for k, v in dist.items() if k != "kind"}}


class _Differs(NotDrawn):
    """A distribution's parameter differs between cases (per-case `dists` declare it)."""


def same_reader(cases: list[FollowedCase], what: str) -> Callable[[ast.expr], Any]:
    """The value `node` has in every case (follow.same_in_every_case), _Differs where it differs."""

    def read(node: ast.expr) -> Any:
        values = [case.read(node) for case in cases]
        if not any(isinstance(value, Unknown) for value in values) and not all(
            same_value(value, values[0]) for value in values
        ):
            raise _Differs(f"{what} `{ast.unparse(node)}` differs between cases")
        return same_in_every_case(cases, node, what)

    return read


def _case_reader(case: FollowedCase, shown: str) -> Callable[[ast.expr], Any]:
    def read(node: ast.expr) -> Any:
        value = case.read(node)
        if isinstance(value, Unknown):
            raise NotFollowed(f"input {shown!r}: `{ast.unparse(node)}` cannot be read: {value.reason}")
        return value

    return read


def arange_period(
    cases: list[FollowedCase],
    dims: Dims,
    node: ast.expr,
    shape: list[str | int],
    tensors: list[Tensor],
    name: str,
    key: str = "period",
) -> str | int:
    """An arange's period (or divisor): the dim `node` names, else the axis of the tensor whose size
    it is in every case (`offsets[b, j] = j`: the last one), else a dim or an int of its values."""
    values = [case.read(node) for case in cases]
    if all(is_int(value) and value >= 1 for value in values):
        named = dims.named(node, values)
        if named is not None:
            return named
        for position, axis in enumerate(shape):
            if all(tensor.shape[position] == value for tensor, value in zip(tensors, values)):
                return axis
    return _bound(cases, dims, node, f"{name}_{key}", f"the arange {key}")


def _bound(
    cases: list[FollowedCase], dims: Dims, node: ast.expr, base: str, what: str = "the randint bound"
) -> str | int:
    found = _bound_values(cases, dims, node, what)
    return dims.new(base, found) if isinstance(found, list) else found


def _bound_values(
    cases: list[FollowedCase], dims: Dims, node: ast.expr, what: str = "the randint bound"
) -> str | int | list[int]:
    """The dim naming the bound, else its one value, else its values, one per case."""
    values = [case.read(node) for case in cases]
    if not all(is_int(value) for value in values):
        raise NotHeld(f"{what} `{ast.unparse(node)}` is not an integer in every case")
    if what != "the randint bound" and not all(value >= 1 for value in values):
        raise NotHeld(f"{what} `{ast.unparse(node)}` is below 1 in some case")
    named = dims.named(node, values)
    if named is not None or len(set(values)) == 1:
        return named if named is not None else values[0]
    return [int(value) for value in values]


def with_mask_write(
    dist: dict[str, Any], writes: list[MaskWrite], cases: list[FollowedCase], tensors: list[Tensor], shown: str
) -> dict[str, Any]:
    """`dist` with the masked write's share and value (docs/task-format.md: masked, mask_value)."""
    if len(writes) > 1:
        raise NotDrawn(f"input {shown!r} is written through {len(writes)} masks after it is drawn")
    write = writes[0]
    line = f"(line {write.statement.lineno}: `{ast.unparse(write.statement)[:60]}`)"
    _not_mapped(dist, shown, f"written through a mask {line}")
    if dist["kind"] not in MASKED_KINDS:
        raise NotDrawn(
            f"input {shown!r} is a {dist['kind']} draw written through a mask {line}; arena masks "
            f"{', '.join(MASKED_KINDS)} draws"
        )
    for case, tensor in zip(cases, tensors):
        drawn = case.read(write.rand)
        if not isinstance(drawn, Tensor) or tuple(drawn.shape) != tuple(tensor.shape):
            raise NotDrawn(f"input {shown!r}: its mask {line} is not of its shape in case {case.index + 1}")
    share = same_in_every_case(cases, write.share, f"input {shown!r}: the mask's share")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise NotDrawn(f"input {shown!r}: the mask's share {share!r} is not strictly between 0 and 1 {line}")
    value: Any = NAN if _is_nan(write.value) else same_in_every_case(cases, write.value, f"input {shown!r}: the value")
    if value != NAN and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
        raise NotDrawn(f"input {shown!r} is set to {value!r} through a mask {line}, not a number")
    return {**dist, "masked": share, "mask_value": value}


def _not_mapped(dist: dict[str, Any], shown: str, how: str) -> None:
    """NotImportable for a mapped or normalized draw (arena/task/mapped.py) also `how`: arena does one."""
    if any(key in dist for key in mapped.PARAMS):
        raise NotDrawn(f"input {shown!r} is a mapped or normalized draw also {how}, which arena does not combine")


def _is_nan(node: ast.expr) -> bool:
    """`float('nan')`, `torch.nan`, `math.nan` (a NaN is never equal to itself: read by its spelling)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "nan" and isinstance(node.value, ast.Name) and node.value.id in ("torch", "math")
    return (
        is_call_with_one_argument(node, "float")
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).lower() == "nan"
    )
