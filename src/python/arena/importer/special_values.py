"""A test that checks where an output holds special values, then compares the rest (vLLM's
`triton_apply_grammar_bitmask`), read as the one comparison of the whole that it is:

    ref_neginf = ref.isinf() & (ref < 0)
    gpu_neginf = logits_gpu.cpu().isinf() & (logits_gpu.cpu() < 0)
    if not torch.equal(ref_neginf[:n], gpu_neginf[:n]): ...
    non_inf_mask = ~ref_neginf[:n]
    if not torch.allclose(logits_gpu.cpu()[:n][non_inf_mask], ref[:n][non_inf_mask]): ...

is `if not torch.allclose(logits_gpu.cpu()[:n], ref[:n]): ...`. The two masks are one expression
of the output and of the reference, built of `isinf`, `isnan`, `isfinite`, comparisons with a
number, `&`, `|` and `~`; the first check says the output has the reference's special values where
the reference has them, the second compares every other element. Arena's comparison of the whole
(arena.harness.check) asks as much and more: an infinity must be the same infinity, a NaN a NaN, and
the other elements must agree within the tolerance, which is the second check's. Only that shape:
the masks' comparison first, with the same slice (or none) on both, the other comparison right
after the statement binding the complement, and nothing else reading the names it binds.
"""

from __future__ import annotations

import ast
import copy

_SPECIAL = frozenset(("isinf", "isnan", "isfinite", "isposinf", "isneginf"))
_MOVES = frozenset(("cpu", "cuda", "contiguous", "clone", "detach", "float", "double"))
_EQUAL = ("torch.equal",)
_CLOSE = ("torch.allclose", "torch.testing.assert_close")


def merge_special_value_checks(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with each such pair of checks (above) made one comparison of the whole."""
    masks = {name: n.value for n in body if isinstance(n, ast.Assign) and (name := _bound(n)) is not None}
    result = list(body)
    for index in range(len(body)):
        merged = _merged(body, index, masks)
        if merged is not None:
            first, complement, second, statement = merged
            result = [statement if n is second else n for n in result if n is not first and n is not complement]
            return merge_special_value_checks(result)
    return result


def _merged(
    body: list[ast.stmt], index: int, masks: dict[str, ast.expr]
) -> tuple[ast.stmt, ast.stmt, ast.stmt, ast.stmt] | None:
    first = body[index]
    equal = _checked_call(first, _EQUAL)
    if equal is None or len(equal.args) != 2:
        return None
    sides = [_sliced_name(arg) for arg in equal.args]
    if any(side is None for side in sides):
        return None
    (mask_a, part_a), (mask_b, part_b) = sides  # type: ignore[misc]
    if ast.dump(part_a) != ast.dump(part_b) or mask_a == mask_b or mask_a not in masks or mask_b not in masks:
        return None
    tensors = [_masked_tensor(masks[mask_a]), _masked_tensor(masks[mask_b])]
    if tensors[0] is None or tensors[1] is None:
        return None
    (tensor_a, shape_a), (tensor_b, shape_b) = tensors  # type: ignore[misc]
    if shape_a != shape_b or tensor_a == tensor_b:
        return None
    if index + 2 >= len(body):
        return None
    complement, second = body[index + 1], body[index + 2]
    name = _bound(complement)
    if name is None or not _is_complement(complement.value, (mask_a, mask_b), part_a):  # type: ignore[attr-defined]
        return None
    close = _checked_call(second, _CLOSE)
    if close is None or len(close.args) < 2:
        return None
    compared = [side for arg in close.args[:2] if (side := _masked_side(arg, name, part_a)) is not None]
    if len(compared) != 2 or {_base_name(side) for side in compared} != {tensor_a, tensor_b}:
        return None
    readers = [n for n in body if n is not complement and n is not second and name in _loaded(n)]
    if readers:
        return None
    call = copy.deepcopy(close)
    call.args = [*compared, *call.args[2:]]
    statement = copy.deepcopy(second)
    _replace_call(statement, close, call)
    return first, complement, second, ast.fix_missing_locations(statement)


def _bound(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _checked_call(node: ast.stmt, names: tuple[str, ...]) -> ast.Call | None:
    """The call of one of `names` that `if not f(...):`, `assert f(...)` or `f(...)` makes."""
    test = node.test if isinstance(node, (ast.If, ast.Assert)) else node.value if isinstance(node, ast.Expr) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Call) and ast.unparse(test.func) in names:
        return test
    return None


def _sliced_name(node: ast.expr) -> tuple[str, ast.AST] | None:
    """(name, its slice) of `name[slice]`, (name, an empty marker) of a bare name."""
    if isinstance(node, ast.Name):
        return node.id, ast.Tuple([], ast.Load())
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id, node.slice
    return None


def _masked_tensor(mask: ast.expr) -> tuple[str, str] | None:
    """(the one tensor a mask expression classifies, the expression with that tensor as `_`)."""
    names: set[str] = set()

    def shape(node: ast.expr) -> str | None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            left, right = shape(node.left), shape(node.right)
            return None if left is None or right is None else f"({left} {type(node.op).__name__} {right})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            inner = shape(node.operand)
            return None if inner is None else f"~{inner}"
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant):
            tensor = _tensor_name(node.left)
            if tensor is None or not isinstance(node.comparators[0].value, (int, float)):
                return None
            names.add(tensor)
            return f"(_ {type(node.ops[0]).__name__} {node.comparators[0].value!r})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SPECIAL:
            if node.keywords:
                return None
            torch_call = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
            if torch_call and len(node.args) == 1:
                tensor = _tensor_name(node.args[0])
            elif not torch_call and not node.args:
                tensor = _tensor_name(node.func.value)
            else:
                return None
            if tensor is None:
                return None
            names.add(tensor)
            return f"{node.func.attr}(_)"
        return None

    found = shape(mask)
    return (names.pop(), found) if found is not None and len(names) == 1 else None


def _tensor_name(node: ast.expr) -> str | None:
    """`x` for `x`, `x.cpu()`, `x.float()`; None otherwise."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MOVES:
        if node.args or node.keywords:
            return None
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


def _is_complement(node: ast.expr, masks: tuple[str, str], part: ast.AST) -> bool:
    """`~mask[part]` (or `~mask`) of either mask."""
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)):
        return False
    inner = _sliced_name(node.operand)
    return inner is not None and inner[0] in masks and ast.dump(inner[1]) == ast.dump(part)


def _masked_side(node: ast.expr, complement: str, part: ast.AST) -> ast.expr | None:
    """`t[part]` for `t[part][complement]` (or `t` for `t[complement]`), t moved or not."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and node.slice.id == complement):
        return None
    whole = node.value
    if isinstance(part, ast.Tuple) and not part.elts:
        return copy.deepcopy(whole)
    if isinstance(whole, ast.Subscript) and ast.dump(whole.slice) == ast.dump(part):
        return copy.deepcopy(whole)
    return None


def _base_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return _tensor_name(node)


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _replace_call(statement: ast.stmt, old: ast.Call, new: ast.Call) -> None:
    for parent in ast.walk(statement):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, ast.Call) and ast.dump(value) == ast.dump(old):
                setattr(parent, field, new)
