"""The shape of a call in a test's syntax tree, tested in one place for the readers and rewrites
that ask for it alike."""

from __future__ import annotations

import ast
from typing import TypeGuard


def is_call_with_one_argument(node: ast.AST | None, callee: str) -> TypeGuard[ast.Call]:
    """Whether `node` calls `callee` with exactly one positional argument, keywords aside (each
    reader says which it takes). `callee` as the source spells it (`int`, `torch.arange`), or
    `.to` for that method of any object."""
    if not isinstance(node, ast.Call) or len(node.args) != 1:
        return False
    if callee.startswith("."):
        return isinstance(node.func, ast.Attribute) and node.func.attr == callee[1:]
    return ast.unparse(node.func) == callee
