"""The parts of a fill loop that the fill rewrites (arena.importer.fill_loops, .grid_fills)
recognise alike: an integer torch.zeros, a `for` over one range, a loop's name read after it, the
names a statement writes."""

from __future__ import annotations

import ast

from arena.importer.calls import is_call_with_one_argument
from arena.importer.draws import INTEGER_DTYPES
from arena.importer.syntax import same


def written(node: ast.stmt) -> set[str]:
    """The names `node` binds or stores into (`x = ...`, `x[i] = ...`, `x += ...`, a loop's target)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name):
            names.add(sub.value.id)
    return names


def integer_zeros(node: ast.stmt) -> ast.Call | None:
    """The call of `name = torch.zeros(..., dtype=<an integer dtype>[, device=...])`."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "torch.zeros"
        and {k.arg for k in node.value.keywords} <= {"dtype", "device"}
        and any(k.arg == "dtype" and ast.unparse(k.value) in INTEGER_DTYPES for k in node.value.keywords)
    ):
        return node.value
    return None


def range_loop(node: ast.stmt, count: ast.expr | None = None, statements: int = 1) -> ast.For | None:
    """`node` when it is `for <name> in range(count):` with `statements` statements and no else."""
    if (
        isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and not node.orelse
        and len(node.body) == statements
        and is_call_with_one_argument(node.iter, "range")
        and not node.iter.keywords
        and (count is None or same(node.iter.args[0], count))
    ):
        return node
    return None


def read_before_rebound(name: str, statements: list[ast.stmt]) -> bool:
    """Whether `statements` read `name` before a plain rebinding of it (`for name in ...:`, `name = ...`)."""
    for statement in statements:
        head: ast.AST | None = None
        if isinstance(statement, ast.For) and isinstance(statement.target, ast.Name) and statement.target.id == name:
            head = statement.iter
        elif isinstance(statement, ast.Assign) and [getattr(t, "id", "") for t in statement.targets] == [name]:
            head = statement.value
        elif isinstance(statement, ast.For) and not statement.orelse:
            # another loop: its body may rebind the name before it reads it (`for j in range(n):`
            # nested in it); a rebinding inside it need not run, so the statements after it count
            reads_head = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement.iter)) or any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement.target)
            )
            if reads_head or read_before_rebound(name, statement.body):
                return True
            continue
        reads = head if head is not None else statement
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(reads)):
            return True
        if head is not None:
            return False
    return False
