"""A draw masked to a triangle of each block, as a `tril` distribution (docs/task-format.md).

Recognised, FLA's chunked matrices as AKA's tests build them:

    A = torch.randn(B, T, H, BT) * 0.1
    idx = torch.arange(BT)
    t_in_block = torch.arange(T) % BT
    mask = t_in_block[:, None] > idx[None, :]
    A = A * mask[None, :, None, :]

the mask a comparison of two aranges, one per axis of the mask (`v[:, None]`, `v[None, :]`, a name
bound to one or the expression itself), the compared index either plain or `% n`; the product
places the mask's two axes on the draw's (`mask[None, :, None, :]`, or the last two for a bare
`mask`). It is a tril of the draw: kept where j <= (i mod n) + diagonal, j the plain arange's
axis (cols), i the other's (rows), diagonal -1 for a strict comparison and 0 otherwise. The sizes
are checked per case by the caller (`Triangle.sizes`, `within`): each arange spans its axis, `% n` is by
the cols axis' size, and a plain i spans no more than cols (so that i mod n is i).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from arena.importer.calls import is_call_with_one_argument
from arena.importer.outcome import NotDrawn, NotImportable

Lookup = Callable[[str], ast.expr | None]  # the value the loop last binds a name to before the product


@dataclass(frozen=True)
class Triangle:
    base: ast.expr  # the draw the product masks (the name's assignment before it)
    rows: int
    cols: int
    diagonal: int
    sizes: tuple[tuple[ast.expr, int], ...]  # (expression, axis): in every case, the draw's size on that axis
    within: bool  # i is not taken modulo: in every case rows is no longer than cols


def masked(name: str, value: ast.expr) -> tuple[str, ast.expr] | None:
    """(mask name, its index expression) when `value` is `name * mask[...]` or `mask[...] * name`."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    sides = [value.left, value.right]
    own = [side for side in sides if isinstance(side, ast.Name) and side.id == name]
    if len(own) != 1:
        return None
    other = sides[1 - sides.index(own[0])]
    mask = other.value if isinstance(other, ast.Subscript) else other
    if not isinstance(mask, ast.Name):
        return None
    return mask.id, other


def read_triangle(name: str, value: ast.expr, lookup: Lookup, rank: int, base: ast.expr | None) -> Triangle:
    """The tril `name = name * mask[...]` draws over `base` (`name`'s earlier draw)."""
    found = masked(name, value)
    if found is None or base is None:
        raise _refused(name, value, "is not a draw masked by a comparison of aranges")
    mask_name, placed = found
    axes = _placement(placed, rank)
    if axes is None:
        raise _refused(name, value, "places its mask on other than two of the draw's axes")
    comparison = lookup(mask_name)
    if not (
        isinstance(comparison, ast.Compare)
        and len(comparison.ops) == 1
        and isinstance(comparison.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE))
    ):
        raise _refused(name, value, f"masks with `{mask_name}`, which is not one comparison of two aranges")
    left, right = (_index(side, lookup) for side in (comparison.left, comparison.comparators[0]))
    if left is None or right is None or left[0] == right[0]:
        raise _refused(name, value, f"masks with `{mask_name}`, which is not one comparison of two aranges")
    # P > Q is Q <= P - 1; P >= Q is Q <= P: j is the lesser side, i the greater.
    op = comparison.ops[0]
    lesser, greater = (right, left) if isinstance(op, (ast.Gt, ast.GtE)) else (left, right)
    diagonal = -1 if isinstance(op, (ast.Gt, ast.Lt)) else 0
    if lesser[2] is not None:
        raise _refused(name, value, "keeps values above a diagonal of its blocks (the modulus is on the column)")
    rows, cols = axes[greater[0]], axes[lesser[0]]
    sizes = [(greater[1], rows), (lesser[1], cols)] + ([(greater[2], cols)] if greater[2] is not None else [])
    return Triangle(base, rows, cols, diagonal, tuple(sizes), within=greater[2] is None)


def _placement(placed: ast.expr, rank: int) -> tuple[int, int] | None:
    """The draw's axes the mask's two axes fall on: the slices of `mask[None, :, None, :]`."""
    if not isinstance(placed, ast.Subscript):
        return (rank - 2, rank - 1) if rank >= 2 else None
    elements = placed.slice.elts if isinstance(placed.slice, ast.Tuple) else [placed.slice]
    if len(elements) != rank or not all(_is_full(e) or _is_none(e) for e in elements):
        return None
    slices = [position for position, e in enumerate(elements) if _is_full(e)]
    return (slices[0], slices[1]) if len(slices) == 2 else None


def _index(side: ast.expr, lookup: Lookup) -> tuple[int, ast.expr, ast.expr | None] | None:
    """(the mask axis, the arange's size, its modulus or None) of `v[:, None]` or `v[None, :]`."""
    if not (isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Tuple) and len(side.slice.elts) == 2):
        return None
    first, second = side.slice.elts
    if _is_full(first) and _is_none(second):
        axis = 0
    elif _is_none(first) and _is_full(second):
        axis = 1
    else:
        return None
    vector: ast.expr | None = side.value
    if isinstance(vector, ast.Name):
        vector = lookup(vector.id)
    modulus: ast.expr | None = None
    if isinstance(vector, ast.BinOp) and isinstance(vector.op, ast.Mod):
        modulus = vector.right
        vector = vector.left
    if not (
        is_call_with_one_argument(vector, "torch.arange") and all(k.arg in ("device", "dtype") for k in vector.keywords)
    ):
        return None
    return axis, vector.args[0], modulus


def _is_full(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _refused(name: str, value: ast.expr, why: str) -> NotImportable:
    return NotDrawn(f"input {name!r} is `{ast.unparse(value)[:60]}`, which {why}")
