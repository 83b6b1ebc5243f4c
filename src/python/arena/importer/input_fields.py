"""The kernel call's tensor arguments as inputs: each one's draw, followed back through copies,
casts, a normalization and a triangle mask, with its shape in dims and its dtype."""

from __future__ import annotations

import ast
from typing import Any

from arena.importer.case_tensors import checked_tensors, field_dtype
from arena.importer.correctness import TestLoop
from arena.importer.dims import Dims
from arena.importer.draws import Draw, find_draw, normalized_axis, with_mapped
from arena.importer.fields import TensorField
from arena.importer.follow import FollowedCase
from arena.importer.input_assignments import PASSED_AS_IS, MaskWrite, last_assignment, through_copies
from arena.importer.input_distributions import (
    arange_period,
    bounded,
    distributions,
    same_reader,
    with_mask_write,
    with_tril,
)
from arena.importer.outcome import KernelCallNotRead, NotDrawn
from arena.importer.triangle import Triangle, masked, read_triangle
from arena.importer.values import Tensor, Unknown, same_value
from arena.task.task import INT_DTYPES


def read_inputs(loop: TestLoop, cases: list[FollowedCase], dims: Dims) -> tuple[tuple[TensorField, ...], list[int]]:
    """The tensor arguments as inputs, in the call's order; the positions of the other arguments."""
    fields: list[TensorField] = []
    others: list[int] = []
    for position, node in enumerate(loop.kernel_call.args):
        values = [case.arguments[position] for case in cases]
        # An argument the reading cannot follow is most often a tensor built some other way:
        # read as an input, it is refused with the expression that builds it.
        if not any(isinstance(value, (Tensor, Unknown)) for value in values):
            others.append(position)
            continue
        fields.append(_input(loop, cases, dims, node, values, {f.name for f in fields}))
    for keyword in loop.kernel_call.keywords:
        if any(isinstance(case.keywords.get(keyword.arg or "**"), Tensor) for case in cases):
            raise KernelCallNotRead(f"tensor {keyword.arg}= is passed by keyword; arena passes inputs by position")
    if not fields:
        raise KernelCallNotRead(f"`{loop.function_name}` is given no tensor")
    return tuple(fields), others


def _input(
    loop: TestLoop, cases: list[FollowedCase], dims: Dims, node: ast.expr, values: list[Any], seen: set[str]
) -> TensorField:
    """The input the kernel call passes as `node`: its draw, read back from the loop (through copies,
    casts, a normalization, a triangle mask and writes through a mask), its shape in dims and its
    dtype from the values the cases gave it."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PASSED_AS_IS:
        node = node.func.value
    shown = ast.unparse(node)
    if not isinstance(node, ast.Name) or node.id in seen:
        raise KernelCallNotRead(f"kernel argument `{shown}` is not one named tensor")
    writes: list[MaskWrite] = []
    assignment, copy_of, cast_of = through_copies(loop, cases, node, values, seen, writes)
    axis, triangle, assignment = _before_reshaping(loop, cases, node, values, assignment)
    draw = find_draw(node.id, assignment)
    tensors = checked_tensors(values, f"input {shown!r}")
    dist, case_dists = distributions(draw, node.id, cases, shown)
    if axis is not None:
        along = same_reader(cases, f"input {shown!r}: the axis it is normalized along")(axis)
        if isinstance(along, bool) or not isinstance(along, int):
            raise NotDrawn(f"input {shown!r} is normalized along `{ast.unparse(axis)}`, not one axis")
        dist = with_mapped(dist, node.id, normalize=along)
        case_dists = tuple(with_mapped(d, node.id, normalize=along) for d in case_dists)
    if triangle is not None:
        dist = with_tril(dist, triangle, shown)
        case_dists = tuple(with_tril(d, triangle, shown) for d in case_dists)
    if writes:  # `x[torch.rand(...) < p] = v` after the draw
        if copy_of or triangle is not None:
            raise NotDrawn(f"input {shown!r} is written through a mask and also copied or masked to a triangle")
        dist = with_mask_write(dist, writes, cases, tensors, shown)
        case_dists = tuple(with_mask_write(d, writes, cases, tensors, shown) for d in case_dists)
    case_dists = bounded(dist, case_dists, cases, dims)
    shape = _shape(draw, tensors, dims, node.id)
    for key in ("period", "divisor") if dist["kind"] == "arange" else ():  # `% p`, `// d`: a dim or an int
        if key in dist:
            dist[key] = arange_period(cases, dims, dist[key], shape, tensors, node.id, key)
            case_dists = tuple({**d, key: dist[key]} for d in case_dists)
    dtype, case_dtypes = field_dtype(tensors, f"input {shown!r}")
    data = draw.call.args[0] if draw.kind == "tensor" and draw.wrapped is None and draw.call.args else None
    return TensorField(
        node.id,
        tuple(shape),
        dtype,
        dist,
        copy_of=tuple(copy_of),
        cast_of=tuple(cast_of),
        case_dists=case_dists if any(d != dist for d in case_dists) else (),
        case_dtypes=case_dtypes,
        literal_of=data.id if isinstance(data, ast.Name) and dtype in INT_DTYPES and not copy_of else None,
    )


def _before_reshaping(
    loop: TestLoop, cases: list[FollowedCase], node: ast.Name, values: list[Any], assignment: ast.expr
) -> tuple[ast.expr | None, Triangle | None, ast.expr]:
    """(the axis `node` is normalized along, the triangle it is masked to, the draw before both):
    `p = p / p.sum(-1, keepdim=True)` is p's earlier draw normalized along -1; `A = A * mask[...]`
    a tril of A's draw (checked against the cases' values)."""
    shown = ast.unparse(node)
    axis = normalized_axis(node.id, assignment)
    if axis is not None:
        earlier = _value(last_assignment(loop, node.id, before=assignment))
        if earlier is None:
            raise NotDrawn(f"input {shown!r} is `{ast.unparse(assignment)[:60]}` of values no draw makes")
        assignment = earlier
    triangle: Triangle | None = None
    if masked(node.id, assignment) is not None:
        tensors = checked_tensors(values, f"input {shown!r}")
        earlier = _value(last_assignment(loop, node.id, before=assignment))
        triangle = read_triangle(
            node.id, assignment, lambda n: _value(last_assignment(loop, n)), len(tensors[0].shape), earlier
        )
        _check_triangle(triangle, cases, tensors, shown)
        assignment = triangle.base
    return axis, triangle, assignment


def _shape(draw: Draw, tensors: list[Tensor], dims: Dims, name: str) -> list[str | int]:
    """Each axis's dim: the one its size expression names, else one of the cases' sizes."""
    axes = draw.size_args
    if len(axes) == 1 and isinstance(axes[0], (ast.Tuple, ast.List)):
        axes = axes[0].elts  # torch.randn((m, n)): one tuple of sizes
    shape: list[str | int] = []
    for position in range(len(tensors[0].shape)):
        per_case = [tensor.shape[position] for tensor in tensors]
        named = dims.named(axes[position], per_case) if len(axes) == len(tensors[0].shape) else None
        if named is None:  # no size expression per axis (zeros_like, arange(a, b)): a dim of those values
            base = f"{name}_{position}"
            named = dims.matching(per_case, base, avoid=shape) if not axes else dims.new(base, per_case)
        shape.append(named)
    return shape


def _value(found: ast.expr | ast.stmt | None) -> ast.expr | None:
    return found if isinstance(found, ast.expr) else None


def _check_triangle(triangle: Triangle, cases: list[FollowedCase], tensors: list[Tensor], shown: str) -> None:
    """Each arange of the mask spans the axis it is placed on, in every case (and a row index not
    taken modulo spans no more than the columns): what makes the mask a tril of these axes."""
    for case, tensor in zip(cases, tensors):
        for size, axis in triangle.sizes:
            if not same_value(case.read(size), tensor.shape[axis]):
                raise NotDrawn(
                    f"input {shown!r}: its mask's `{ast.unparse(size)}` is not the size of its axis {axis} "
                    f"in case {case.index + 1}"
                )
        if triangle.within and tensor.shape[triangle.rows] > tensor.shape[triangle.cols]:
            raise NotDrawn(f"input {shown!r}: its mask's rows outnumber its columns, without a modulus")
