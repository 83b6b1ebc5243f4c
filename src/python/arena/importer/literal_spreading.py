"""`f(*args, **kwargs)` of literal tuples and dicts spread into the names they hold, an element of
such a tuple read as itself, and `tuple(E for a in args)` over one unrolled."""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.syntax import Renamer


def spread_literals(body: list[ast.stmt]) -> list[ast.stmt]:
    """`args, kwargs = (x, 64), {"eps": 1e-6}` then `f(*args, **kwargs)`: `f(x, 64, eps=1e-6)`;
    `args[0]`: x; and `tuple(E for a in args)` over such a tuple: the tuple of E for each element. Exact rewrites,
    so that each argument is one named tensor or one value again."""
    literals: dict[str, ast.expr] = {}
    result: list[ast.stmt] = []
    for node in body:
        node = _Spreader(literals).visit(copy.deepcopy(node))
        ast.fix_missing_locations(node)
        stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for name in list(literals):  # a literal whose name, or a name it holds, is rebound is gone
            if name in stored or stored & {n.id for n in ast.walk(literals[name]) if isinstance(n, ast.Name)}:
                del literals[name]
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            pairs: list[tuple[ast.expr, ast.expr]] = [(node.targets[0], node.value)]
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                pairs = list(zip(target.elts, value.elts))
            for element, item in pairs:
                if isinstance(element, ast.Name) and (
                    isinstance(item, ast.Tuple) or (isinstance(item, ast.Dict) and _literal_keys(item))
                ):
                    literals[element.id] = item
        result.append(node)
    return result


def _literal_keys(node: ast.Dict) -> bool:
    return all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier() for k in node.keys)


class _Spreader(ast.NodeTransformer):
    def __init__(self, literals: dict[str, ast.expr]) -> None:
        self.literals = literals

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """`args[1]` of a literal tuple `args`, read: its element."""
        self.generic_visit(node)
        literal = self.literals.get(node.value.id) if isinstance(node.value, ast.Name) else None
        index = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(literal, ast.Tuple)
            and type(index) is int
            and -len(literal.elts) <= index < len(literal.elts)
        ):
            return ast.copy_location(copy.deepcopy(literal.elts[index]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        unrolled = self._unrolled(node)
        if unrolled is not None:
            return unrolled
        args: list[ast.expr] = []
        for arg in node.args:
            spread = arg.value if isinstance(arg, ast.Starred) else None
            literal = self.literals.get(spread.id) if isinstance(spread, ast.Name) else None
            if isinstance(literal, ast.Tuple):
                args += [copy.deepcopy(element) for element in literal.elts]
            else:
                args.append(arg)
        keywords: list[ast.keyword] = []
        for keyword in node.keywords:
            literal = self.literals.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
            if keyword.arg is None and isinstance(literal, ast.Dict):
                keywords += [
                    ast.keyword(k.value, copy.deepcopy(v))  # type: ignore[union-attr]
                    for k, v in zip(literal.keys, literal.values)
                ]
            else:
                keywords.append(keyword)
        node.args, node.keywords = args, keywords
        return node

    def _unrolled(self, node: ast.Call) -> ast.expr | None:
        """`tuple(E for a in args)` over a literal tuple `args`: (E[a := x], E[a := 64])."""
        if not (
            is_call_with_one_argument(node, "tuple") and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
        ):
            return None
        comprehension = node.args[0]
        if len(comprehension.generators) != 1:
            return None
        generator = comprehension.generators[0]
        literal = self.literals.get(generator.iter.id) if isinstance(generator.iter, ast.Name) else None
        if not isinstance(literal, ast.Tuple) or generator.ifs or not isinstance(generator.target, ast.Name):
            return None
        name = generator.target.id
        elements = [Renamer({name: element}).visit(copy.deepcopy(comprehension.elt)) for element in literal.elts]
        return ast.copy_location(ast.Tuple(elements, ast.Load()), node)
