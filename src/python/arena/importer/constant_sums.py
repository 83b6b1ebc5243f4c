"""The running sums of a constant, read as the arange they are (a rewrite before the readers).

`counts = torch.full((n,), c, dtype=torch.int32)` then `cu = torch.cumsum(counts, dim=0)`
(vLLM's `triton_expand`: every request has c tokens) holds c, 2c, ..., nc: the values of
`torch.arange(n, dtype=torch.int64) * c + c` (an integer cumsum is int64, as torch makes it).
Read as that arange, the interpreter knows its values (`num_tokens = int(cu[-1].item())` is a
number) and the input is an arena `arange`. Only where the fill is integer, one-dimensional, and
read by nothing but the cumsum; `[c] * n` given to `torch.tensor(..., dtype=<int>)` is the same fill.
"""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.draws import INTEGER_DTYPES


def fold_constant_sums(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with each cumsum of a constant integer fill bound above replaced by its arange, and
    its last value read back (`int(cu[-1].item())`) by the number it is, `n * c`."""
    fills: dict[str, tuple[ast.expr, ast.expr, list[ast.keyword]]] = {}  # name -> (n, c, keywords)
    sums: dict[str, ast.expr] = {}  # the folded sums: name -> their last value, n * c
    result: list[ast.stmt] = []
    for position, node in enumerate(body):
        fill = _constant_fill(node)
        total: ast.expr | None = None
        if fill is not None:
            fills[fill[0]] = fill[1:]
        elif isinstance(node, ast.Assign):
            folded = _folded(node, fills, body[:position] + body[position + 1 :])
            if folded is not node:
                n, c, _ = fills[_summed_name(_unchained(node.value))[0]]  # type: ignore[index]
                total = ast.BinOp(copy.deepcopy(n), ast.Mult(), copy.deepcopy(c))
            last = _last_value(node.value, sums)
            node = (
                folded
                if last is None
                else ast.fix_missing_locations(ast.copy_location(ast.Assign(node.targets, last), node))
            )
        stored = _stored(node)
        for name in stored - ({fill[0]} if fill else set()):
            fills.pop(name, None)
            sums.pop(name, None)
        if total is not None:
            sums.update({name: total for name in stored})
        result.append(node)
    return result


def _unchained(value: ast.expr) -> ast.expr:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr != "cumsum":
        value = value.func.value
    return value


def _last_value(value: ast.expr, sums: dict[str, ast.expr]) -> ast.expr | None:
    """`n * c` for `int(cu[-1].item())` or `cu[-1].item()` of a folded sum cu; None otherwise."""
    if is_call_with_one_argument(value, "int"):
        value = value.args[0]
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "item"):
        return None
    element = value.func.value
    if not (
        isinstance(element, ast.Subscript)
        and isinstance(element.value, ast.Name)
        and element.value.id in sums
        and ast.unparse(element.slice) == "-1"
    ):
        return None
    return copy.deepcopy(sums[element.value.id])


def _constant_fill(node: ast.stmt) -> tuple[str, ast.expr, ast.expr, list[ast.keyword]] | None:
    """(name, n, c, keywords) of `name = torch.full((n,), c, dtype=<int>, ...)` or `name = [c] * n`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    name, value = node.targets[0].id, node.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        if isinstance(value.left, ast.List) and len(value.left.elts) == 1:  # [c] * n: its dtype is the tensor's
            return name, value.right, value.left.elts[0], []
        return None
    if not (isinstance(value, ast.Call) and ast.unparse(value.func) == "torch.full" and len(value.args) == 2):
        return None
    size = value.args[0]
    elements = size.elts if isinstance(size, (ast.Tuple, ast.List)) else None
    if elements is None or len(elements) != 1 or any(k.arg not in ("dtype", "device") for k in value.keywords):
        return None
    if not any(k.arg == "dtype" and ast.unparse(k.value) in INTEGER_DTYPES for k in value.keywords):
        return None
    return name, elements[0], value.args[1], [k for k in value.keywords if k.arg == "device"]


def _folded(
    node: ast.Assign, fills: dict[str, tuple[ast.expr, ast.expr, list[ast.keyword]]], others: list[ast.stmt]
) -> ast.Assign:
    """`node` with its cumsum of a fill replaced by the arange, where the fill is read nowhere else."""
    chain: list[ast.Call] = []  # the methods called on the cumsum (`.to(torch.int32)`), outermost first
    current = node.value
    while isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute) and current.func.attr != "cumsum":
        chain.append(current)
        current = current.func.value
    summed = _summed_name(current)
    if summed is None or summed[0] not in fills or any(summed[0] in _read(other) for other in others):
        return node
    name, keywords = summed
    n, c, device = fills[name]
    if summed[1] is not None and not any(
        k.arg == "dtype" and ast.unparse(k.value) in INTEGER_DTYPES for k in summed[1]
    ):
        return node  # torch.tensor([c] * n) without an integer dtype: its values may be floats
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [copy.deepcopy(n)],
        [ast.keyword("dtype", ast.Attribute(ast.Name("torch", ast.Load()), "int64", ast.Load())), *device],
    )
    value: ast.expr = ast.BinOp(ast.BinOp(arange, ast.Mult(), copy.deepcopy(c)), ast.Add(), copy.deepcopy(c))
    for call in reversed(chain):
        method = call.func.attr  # type: ignore[attr-defined]
        value = ast.Call(ast.Attribute(value, method, ast.Load()), call.args, call.keywords)
    folded = ast.Assign(targets=node.targets, value=value)
    return ast.fix_missing_locations(ast.copy_location(folded, node))


def _summed_name(node: ast.expr) -> tuple[str, list[ast.keyword] | None] | None:
    """(name, the torch.tensor keywords or None) of `torch.cumsum(name, dim=0)`, `name.cumsum(0)`,
    or `torch.cumsum(torch.tensor(name, dtype=...), dim=0)`; None for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cumsum"):
        return None
    args = list(node.args)
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        operand = args.pop(0) if args else None
    else:
        operand = node.func.value
    dims = args + [k.value for k in node.keywords if k.arg == "dim"]
    if len(dims) != 1 or not (isinstance(dims[0], ast.Constant) and dims[0].value in (0, -1)):
        return None
    if any(k.arg != "dim" for k in node.keywords):
        return None
    if isinstance(operand, ast.Name):
        return operand.id, None
    if is_call_with_one_argument(operand, "torch.tensor") and isinstance(operand.args[0], ast.Name):
        return operand.args[0].id, operand.keywords
    return None


def _read(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
