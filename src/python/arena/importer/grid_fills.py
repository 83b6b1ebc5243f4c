"""An integer 2-D torch.zeros that the next statement fills, row by row, with each element's
row-major index, its column, or its position's page, as its torch.arange reshaped (the fills
arena.importer.fill_loops folds)."""

from __future__ import annotations

import ast
import copy

from arena.importer.fill_loop_parts import integer_zeros, range_loop, read_before_rebound, written
from arena.importer.syntax import same


def folded_grid(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt]) -> ast.stmt | None:
    """`t = torch.zeros(a, b, dtype=<int>)` then `for i in range(a): for j in range(b): t[i, j] =
    i * b + j` (`b * i + j`, `j + i * b`): every element its row-major index,
    `t = torch.arange(a * b, ...).reshape(a, b)`. Nothing after reads i or j."""
    zeros = integer_zeros(node)
    if zeros is None or len(zeros.args) != 2 or any(isinstance(a, ast.Starred) for a in zeros.args):
        return None
    name, (rows, cols) = node.targets[0].id, zeros.args  # type: ignore[attr-defined]
    outer = range_loop(loop, rows)
    inner = range_loop(outer.body[0], cols) if outer is not None else None
    if outer is None or inner is None:
        return None
    i, j, fill = outer.target.id, inner.target.id, inner.body[0]  # type: ignore[attr-defined]
    index = ast.Tuple([ast.Name(i, ast.Load()), ast.Name(j, ast.Load())], ast.Load())
    if not (
        isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and isinstance(fill.targets[0], ast.Subscript)
        and isinstance(fill.targets[0].value, ast.Name)
        and fill.targets[0].value.id == name
        and same(fill.targets[0].slice, index)
    ):
        return None
    shown = ast.unparse(fill.value).replace(" ", "")
    b = ast.unparse(cols).replace(" ", "")
    within = shown == j  # t[i, j] = j: each row 0 .. b-1, the arange of period b
    if not within and shown not in (f"{i}*{b}+{j}", f"{b}*{i}+{j}", f"{j}+{i}*{b}", f"{j}+{b}*{i}", f"{i}*({b})+{j}"):
        return None
    if read_before_rebound(i, rest) or read_before_rebound(j, rest) or i == j:
        return None
    size = ast.BinOp(copy.deepcopy(rows), ast.Mult(), copy.deepcopy(cols))
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [size],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value: ast.expr = ast.Call(
        ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(rows), copy.deepcopy(cols)], []
    )
    if within:
        value = ast.BinOp(value, ast.Mod(), copy.deepcopy(cols))
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def folded_pages(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt], before: list[ast.stmt]) -> ast.stmt | None:
    """`t = torch.zeros(a, c, dtype=<int>)`, `c = p * d` assigned above, then `for i in range(a):
    for j in range(m): t[i, j] = i * p + j // d` (the value maybe bound to a name first): each row
    the pages of its m positions, d to a page, which is `torch.arange(a * m, ...).reshape(a, c) //
    d` where m == c (the interpreter checks that reshape; a row's elements past m would stay 0).
    Nothing after reads i, j or the value's name."""
    zeros = integer_zeros(node)
    if zeros is None or len(zeros.args) != 2 or any(isinstance(a, ast.Starred) for a in zeros.args):
        return None
    name, (rows, cols) = node.targets[0].id, zeros.args  # type: ignore[attr-defined]
    outer = range_loop(loop, rows)
    inner = None if outer is None else range_loop(outer.body[0]) or range_loop(outer.body[0], statements=2)
    if outer is None or inner is None or not isinstance(cols, ast.Name):
        return None
    i, j, count, body = outer.target.id, inner.target.id, inner.iter.args[0], inner.body  # type: ignore[attr-defined]
    temp = ""
    fill, value = body[-1], getattr(body[-1], "value", None)
    if len(body) == 2:
        first = body[0]
        if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
            return None
        temp, value = first.targets[0].id, first.value
        if not (isinstance(fill, ast.Assign) and isinstance(fill.value, ast.Name) and fill.value.id == temp):
            return None
    index = ast.Tuple([ast.Name(i, ast.Load()), ast.Name(j, ast.Load())], ast.Load())
    if not (
        isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and same(fill.targets[0], ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store()))
        and isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and isinstance(value.left, ast.BinOp)
        and isinstance(value.left.op, ast.Mult)
        and isinstance(value.right, ast.BinOp)
        and isinstance(value.right.op, ast.FloorDiv)
        and same(value.right.left, ast.Name(j, ast.Load()))
    ):
        return None
    row, divisor = ast.Name(i, ast.Load()), value.right.right
    pages = value.left.right if same(value.left.left, row) else value.left.left if same(value.left.right, row) else None
    loop_names = {i, j, name, temp}
    if pages is None or {n.id for e in (pages, divisor) for n in ast.walk(e) if isinstance(n, ast.Name)} & loop_names:
        return None
    if not _product_above(cols.id, pages, divisor, before):
        return None
    if any(read_before_rebound(n, rest) for n in (i, j, temp) if n):
        return None
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [ast.BinOp(copy.deepcopy(rows), ast.Mult(), copy.deepcopy(count))],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    shaped = ast.Call(ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(rows), copy.deepcopy(cols)], [])
    folded = ast.Assign([ast.Name(name, ast.Store())], ast.BinOp(shaped, ast.FloorDiv(), copy.deepcopy(divisor)))
    return ast.fix_missing_locations(ast.copy_location(folded, node))


def _product_above(name: str, a: ast.expr, b: ast.expr, before: list[ast.stmt]) -> bool:
    """Whether the last assignment of `name` in `before` is `name = a * b` (or `b * a`) and no
    statement after it writes `name` or a name `a` or `b` reads."""
    reads = {n.id for e in (a, b) for n in ast.walk(e) if isinstance(n, ast.Name)} | {name}
    for position in range(len(before) - 1, -1, -1):
        statement = before[position]
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
        ):
            product = statement.value
            return (
                isinstance(product, ast.BinOp)
                and isinstance(product.op, ast.Mult)
                and (
                    (same(product.left, a) and same(product.right, b))
                    or (same(product.left, b) and same(product.right, a))
                )
            )
        if written(statement) & reads:
            return False
    return False
