"""An `if` whose two branches each assign one name, read as one assignment (vLLM's
`triton_scaled_mm`: `if per_tok_a: scale_a = torch.rand(M, 1) * 2 + 0.5` / `else: scale_a =
torch.rand(1, 1) * 2 + 0.5`, `per_tok_a` a case value).

`if c: x = f(a)` / `else: x = f(b)` is `x = f(a if c else b)`: the same value in every case, the
test deciding per case as before, and one draw either way. The two expressions are merged where
they differ, as deep as their trees agree (`torch.rand(M if per_tok_a else 1, 1) * 2 + 0.5`), so a
draw whose size alone depends on the case stays a draw the reading knows; where they differ at
the top the assignment is `x = e1 if c else e2`, which the reading refuses as any other value it
does not draw. Only where the test reads names alone (no call: it is evaluated once per place it
is merged into) and each branch is that one assignment of one name.

Since session 24's helper, each branch may be several such assignments, of the same names in the
same order, none reading a name the branches assign (vLLM's `triton_prepare_mrope_positions`:
`if is_prefill: prefill_lens = torch.full((n,), max_model_len, ...); num_computed_tokens =
torch.zeros(n, ...)` / `else:` the same names, `torch.full((n,), 10, ...)` and `torch.full((n,),
50, ...)`): one merged assignment per name, in that order. And where one branch fills with
`torch.zeros(s, dtype=d)` (or `ones`) and the other with `torch.full(s, v, dtype=d)`, the first is
read as `torch.full(s, 0, dtype=d)` (or 1), the same tensor, so the two merge into one constant fill
whose value the case decides (`torch.full((n,), 0 if is_prefill else 50, ...)`); only with a
`dtype=`, since `torch.full` of an int without one makes int64 where `zeros` makes float32.
"""

from __future__ import annotations

import ast
import copy


def merge_branch_assignments(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with each such `if` (above) made one assignment per name."""
    result: list[ast.stmt] = []
    for node in body:
        merged = _merged(node) if isinstance(node, ast.If) else None
        result.extend(merged if merged is not None else [node])
    return result


def _merged(node: ast.If) -> list[ast.stmt] | None:
    first, second = _assignments(node.body), _assignments(node.orelse)
    if not first or not second or [_name(a) for a in first] != [_name(a) for a in second]:
        return None
    if any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield)) for n in ast.walk(node.test)):
        return None
    assigned = {_name(a) for a in first}
    if any(isinstance(n, ast.Name) and n.id in assigned for a in first + second for n in ast.walk(a.value)):
        return None  # one reads what another assigns: merged apart, the order would matter
    merged: list[ast.stmt] = []
    for one, other in zip(first, second):
        value = _merge(*_as_full(one.value, other.value), node.test)
        assignment = ast.Assign([copy.deepcopy(one.targets[0])], value)
        merged.append(ast.fix_missing_locations(ast.copy_location(assignment, node)))
    return merged


def _assignments(body: list[ast.stmt]) -> list[ast.Assign] | None:
    """The branch's statements, where each is an assignment of one name; else None."""
    if all(isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) for n in body):
        return body  # type: ignore[return-value]
    return None


def _name(assignment: ast.Assign) -> str:
    return assignment.targets[0].id  # type: ignore[attr-defined]


def _as_full(first: ast.expr, second: ast.expr) -> tuple[ast.expr, ast.expr]:
    """`torch.zeros(s, dtype=d)` beside `torch.full(s, v, dtype=d)` as `torch.full(s, 0, dtype=d)`
    (`ones`: 1), either way round; the two as they are otherwise."""
    if _fill(first) in _FILLS and _fill(second) == "full":
        return _full(first), second  # type: ignore[arg-type]
    if _fill(second) in _FILLS and _fill(first) == "full":
        return first, _full(second)  # type: ignore[arg-type]
    return first, second


_FILLS = {"zeros": 0, "ones": 1}


def _fill(node: ast.expr) -> str:
    """ "zeros", "ones" or "full" for such a torch call (the first two with a dtype=), else ""."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "torch"
        and all(k.arg for k in node.keywords)
    ):
        return ""
    name = node.func.attr
    if name in _FILLS and node.args and any(k.arg == "dtype" for k in node.keywords):
        return name
    return name if name == "full" and len(node.args) == 2 else ""


def _full(node: ast.Call) -> ast.Call:
    sizes = node.args
    size = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)) else ast.Tuple(sizes, ast.Load())
    value = ast.Constant(_FILLS[node.func.attr])  # type: ignore[attr-defined]
    func = ast.Attribute(ast.Name("torch", ast.Load()), "full", ast.Load())
    full = ast.Call(func, [copy.deepcopy(size), value], copy.deepcopy(node.keywords))
    return ast.fix_missing_locations(ast.copy_location(full, node))


def _merge(first: ast.AST, second: ast.AST, test: ast.expr) -> ast.AST:
    """`first` where the two agree, `first_part if test else second_part` where they differ."""
    if ast.dump(first) == ast.dump(second):
        return copy.deepcopy(first)
    if type(first) is type(second) and all(
        getattr(first, name) == getattr(second, name)
        for name in first._fields
        if not isinstance(getattr(first, name), (ast.AST, list))
    ):
        merged = copy.copy(first)
        for name in first._fields:
            one, other = getattr(first, name), getattr(second, name)
            if isinstance(one, ast.AST) and isinstance(other, ast.AST):
                if not isinstance(one, ast.expr) and ast.dump(one) != ast.dump(other):
                    break
                setattr(merged, name, _merge(one, other, test))
            elif isinstance(one, list) and isinstance(other, list) and len(one) == len(other):
                if not all(isinstance(a, ast.expr) or ast.dump(a) == ast.dump(b) for a, b in zip(one, other)):
                    break
                setattr(merged, name, [_merge(a, b, test) for a, b in zip(one, other)])
            elif one is None and other is None:
                continue
            elif isinstance(one, list) or isinstance(other, list) or one is None or other is None:
                break
        else:
            if isinstance(merged, ast.expr):
                return merged
    assert isinstance(first, ast.expr) and isinstance(second, ast.expr)
    return ast.IfExp(copy.deepcopy(test), copy.deepcopy(first), copy.deepcopy(second))
