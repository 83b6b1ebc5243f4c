"""Two tools on a test's syntax tree that several rewrites share: whether two trees are the same
(`same`), and a transformer that renames names (`Renamer`)."""

from __future__ import annotations

import ast
import copy


class Renamer(ast.NodeTransformer):
    def __init__(self, renames: dict[str, ast.expr]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        replacement = self.renames.get(node.id)
        if replacement is None:
            return node
        if isinstance(replacement, ast.Name):
            return ast.copy_location(ast.Name(replacement.id, node.ctx), node)
        return ast.copy_location(copy.deepcopy(replacement), node)


def same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, annotate_fields=False) == ast.dump(b, annotate_fields=False)
