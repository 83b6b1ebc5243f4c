"""An integer torch.zeros that the next statement fills with a progression, as its torch.arange:
`fold_fill_loops`, and the 1-D fills (each index times a step, a running sum, rows of ranges laid
end to end). The 2-D fills: arena.importer.grid_fills."""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.fill_loop_parts import integer_zeros, range_loop, read_before_rebound, written
from arena.importer.grid_fills import folded_grid, folded_pages
from arena.importer.syntax import same


def fold_fill_loops(body: list[ast.stmt]) -> list[ast.stmt]:
    """An integer `t = torch.zeros(n + 1, ...)` that the next statement fills as a running sum,
    `for r in range(n): t[r + 1] = t[r] + c`, or `t = torch.zeros(n, ...)` filled as `for j in
    range(n): t[j] = j * c` (`c * j`, `j`): `t = torch.arange(n [+ 1], ...) * c`, the same values
    (k * c at k; an integer c: a fractional one, truncated at each store, is refused where the
    draw is read). `c` reads neither the loop's name nor t, and nothing after reads the loop's name."""
    result: list[ast.stmt] = []
    sums: dict[str, tuple[ast.expr, ast.expr]] = {}  # running sums folded above: name -> (n, c), s[r] = r * c
    position = 0
    while position < len(body):
        node = body[position]
        following = body[position + 1] if position + 1 < len(body) else None
        rest = body[position + 2 :]
        folded = None
        if following is not None:
            folded = (
                _folded_rows(node, following, rest, sums)
                or folded_pages(node, following, rest, result)
                or _folded_fill(node, following, rest)
            )
        if folded is not None:
            for name in written(node):
                sums.pop(name, None)
            summed = _running_sum(node, following)  # type: ignore[arg-type]
            if summed is not None:
                sums[summed[0]] = summed[1:]
            result.append(folded)
            position += 2
            continue
        for name in written(node):
            sums.pop(name, None)
        result.append(node)
        position += 1
    return result


def _running_sum(node: ast.stmt, loop: ast.stmt) -> tuple[str, ast.expr, ast.expr] | None:
    """(t, n, c) of `t = torch.zeros(n + 1, ...)` and `for r in range(n): t[r + 1] = t[r] + c`."""
    zeros = integer_zeros(node)
    ranged = range_loop(loop)
    if zeros is None or ranged is None or len(zeros.args) != 1:
        return None
    name = node.targets[0].id  # type: ignore[attr-defined]
    index, count, fill = ranged.target.id, ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    read = ast.Subscript(ast.Name(name, ast.Load()), ast.Name(index, ast.Load()), ast.Load())
    if not (
        same(zeros.args[0], _plus_one(count))
        and isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and same(
            fill.targets[0],
            ast.Subscript(ast.Name(name, ast.Load()), _plus_one(ast.Name(index, ast.Load())), ast.Store()),
        )
        and isinstance(fill.value, ast.BinOp)
        and isinstance(fill.value.op, ast.Add)
        and same(fill.value.left, read)
    ):
        return None
    return name, count, fill.value.right


def _folded_rows(
    node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt], sums: dict[str, tuple[ast.expr, ast.expr]]
) -> ast.stmt | None:
    """`t = torch.zeros(size, dtype=<int>)` then `for r in range(n): start = <r * q>; for k in
    range(q): t[start + k] = k`: each of n rows of q elements 0 .. q-1, `t =
    torch.arange(n * q, ...).reshape(size) % q` (the interpreter checks that size is n * q).
    `<r * q>` is `r * q`, `q * r`, or `s[r].item()` (`int(...)` of it) for an `s` folded above
    from `for r in range(n): s[r + 1] = s[r] + q` (s[r] = r * q). Nothing after reads r, start or k."""
    zeros = integer_zeros(node)
    if zeros is None or len(zeros.args) != 1 or isinstance(zeros.args[0], (ast.Tuple, ast.List, ast.Starred)):
        return None
    name, size = node.targets[0].id, zeros.args[0]  # type: ignore[attr-defined]
    rows = range_loop(loop, statements=2)
    if rows is None:
        return None
    r, count, (first, inner) = rows.target.id, rows.iter.args[0], rows.body  # type: ignore[attr-defined]
    ranged = range_loop(inner)
    if not (
        ranged is not None
        and isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
    ):
        return None
    start, k = first.targets[0].id, ranged.target.id  # type: ignore[attr-defined]
    q, fill = ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    if len({r, start, k, name}) != 4 or {n.id for n in ast.walk(q) if isinstance(n, ast.Name)} & {r, start, k, name}:
        return None
    target = ast.Subscript(
        ast.Name(name, ast.Load()), _plus(ast.Name(start, ast.Load()), ast.Name(k, ast.Load())), ast.Store()
    )
    if not (isinstance(fill, ast.Assign) and len(fill.targets) == 1 and same(fill.targets[0], target)):
        return None
    if not (isinstance(fill.value, ast.Name) and fill.value.id == k):
        return None
    if not _row_start(first.value, r, count, q, sums):
        return None
    if any(read_before_rebound(n, rest) for n in (r, start, k)):
        return None
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [ast.BinOp(copy.deepcopy(count), ast.Mult(), copy.deepcopy(q))],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value = ast.BinOp(
        ast.Call(ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(size)], []), ast.Mod(), copy.deepcopy(q)
    )
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def _row_start(
    value: ast.expr, r: str, count: ast.expr, q: ast.expr, sums: dict[str, tuple[ast.expr, ast.expr]]
) -> bool:
    """Whether `value` is r * q for every r in range(count): `r * q`, `q * r`, or `s[r].item()`
    (also inside `int(...)`) of a running sum `s` folded with the same count and step."""
    row = ast.Name(r, ast.Load())
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return (same(value.left, row) and same(value.right, q)) or (same(value.right, row) and same(value.left, q))
    if is_call_with_one_argument(value, "int") and not value.keywords:
        value = value.args[0]
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "item"
        and not value.args
        and not value.keywords
        and isinstance(value.func.value, ast.Subscript)
        and isinstance(value.func.value.value, ast.Name)
        and same(value.func.value.slice, row)
    ):
        return False
    folded = sums.get(value.func.value.value.id)
    return folded is not None and same(folded[0], count) and same(folded[1], q)


def _plus(a: ast.expr, b: ast.expr) -> ast.expr:
    return ast.BinOp(a, ast.Add(), b)


def _folded_fill(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt]) -> ast.stmt | None:
    grid = folded_grid(node, loop, rest)
    if grid is not None:
        return grid
    zeros = integer_zeros(node)
    if zeros is None or len(zeros.args) != 1 or isinstance(zeros.args[0], (ast.Tuple, ast.List, ast.Starred)):
        return None
    name, size = node.targets[0].id, zeros.args[0]  # type: ignore[attr-defined]
    ranged = range_loop(loop)
    if ranged is None:
        return None
    index, count, fill = ranged.target.id, ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    if not (isinstance(fill, ast.Assign) and len(fill.targets) == 1 and isinstance(fill.targets[0], ast.Subscript)):
        return None
    target, value = fill.targets[0], fill.value
    if not (isinstance(target.value, ast.Name) and target.value.id == name):
        return None
    step: ast.expr | None = None
    if same(target.slice, _plus_one(ast.Name(index, ast.Load()))) and same(size, _plus_one(count)):
        # t[r + 1] = t[r] + c
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            read = ast.Subscript(ast.Name(name, ast.Load()), ast.Name(index, ast.Load()), ast.Load())
            if same(value.left, read):
                step = value.right
    elif same(target.slice, ast.Name(index, ast.Load())) and same(size, count):
        # t[j] = j * c, c * j or j
        if isinstance(value, ast.Name) and value.id == index:
            step = ast.Constant(1)
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            if isinstance(value.left, ast.Name) and value.left.id == index:
                step = value.right
            elif isinstance(value.right, ast.Name) and value.right.id == index:
                step = value.left
    if step is None or {n.id for n in ast.walk(step) if isinstance(n, ast.Name)} & {name, index}:
        return None
    if read_before_rebound(index, rest):
        return None  # the loop's name, bound after the loop, is read later
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [copy.deepcopy(size)],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value = (
        arange
        if isinstance(step, ast.Constant) and step.value == 1
        else ast.BinOp(arange, ast.Mult(), copy.deepcopy(step))
    )
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def _plus_one(node: ast.expr) -> ast.expr:
    return ast.BinOp(copy.deepcopy(node), ast.Add(), ast.Constant(1))
