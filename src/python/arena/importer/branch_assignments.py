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
"""

from __future__ import annotations

import ast
import copy


def merge_branch_assignments(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with each such `if` (above) made one assignment."""
    result: list[ast.stmt] = []
    for node in body:
        merged = _merged(node) if isinstance(node, ast.If) else None
        result.append(merged if merged is not None else node)
    return result


def _merged(node: ast.If) -> ast.Assign | None:
    first, second = _single_assignment(node.body), _single_assignment(node.orelse)
    if first is None or second is None or first.targets[0].id != second.targets[0].id:  # type: ignore[attr-defined]
        return None
    if any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield)) for n in ast.walk(node.test)):
        return None
    value = _merge(first.value, second.value, node.test)
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([copy.deepcopy(first.targets[0])], value), node))


def _single_assignment(body: list[ast.stmt]) -> ast.Assign | None:
    if len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1:
        return body[0] if isinstance(body[0].targets[0], ast.Name) else None
    return None


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
