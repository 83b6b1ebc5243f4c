"""Rewrites of a test's statements into equivalent ones the readers follow (shared by
arena.importer.correctness, .harness and .pytest_layout). The small ones are here: `try:` bodies in
place of the try, printing and clean-up left out, the kernel file's functions called on its module,
an `if` on names bound to literals as the branch it takes. The others have modules of their own: a
helper that draws the inputs or calls the kernel inlined, a seeding helper as its torch.manual_seed
(arena.importer.helper_inlining, .inlined_call); `f(*args, **kwargs)` of literal tuples and dicts
spread (.literal_spreading); a loop comparing each of the kernel's outputs unrolled (.output_loops);
an integer tensor a loop fills with a progression as its torch.arange (.fill_loops, .grid_fills).
"""

from __future__ import annotations

import ast

_DROPPED_CALLS = frozenset(("print", "torch.cuda.empty_cache", "torch.cuda.synchronize", "gc.collect"))


def flatten(body: list[ast.stmt]) -> list[ast.stmt]:
    """The loop body with `try:` bodies in place of the try and without printing or clean-up; a
    name's annotation is left out (`a: Tensor` declares, `c: Tensor = f(a)` is `c = f(a)`: the same
    values)."""
    flat: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.Try):
            flat += flatten(node.body)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.simple:
            if node.value is not None:
                flat.append(ast.copy_location(ast.Assign([node.target], node.value), node))
        elif isinstance(node, ast.Delete) or _dropped_call(node):
            continue
        else:
            flat.append(node)
    return flat


def _dropped_call(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) in _DROPPED_CALLS
    )


def call_on_module(node: ast.stmt, kernel: dict[str, str], module: str) -> ast.stmt:
    """`fn(...)` as `kernel.fn(...)`, for each function of the kernel file the loop calls."""

    class Rewriter(ast.NodeTransformer):
        def visit_Call(self, call: ast.Call) -> ast.AST:
            self.generic_visit(call)
            if isinstance(call.func, ast.Name) and call.func.id in kernel:
                attribute = ast.Attribute(ast.Name(module, ast.Load()), kernel[call.func.id], ast.Load())
                call.func = ast.copy_location(attribute, call.func)
            return call

    return ast.fix_missing_locations(Rewriter().visit(node))


def fold_constant_ifs(body: list[ast.stmt], known: dict[str, object]) -> list[ast.stmt]:
    """An `if` whose test compares names bound to literals (`if device != "cpu":`, with `device =
    "cuda"` before it) as the branch it takes; `known` holds the literals bound before `body`."""
    known = dict(known)
    result: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            taken = _decide(node.test, known)
            if taken is not None:
                result += fold_constant_ifs(node.body if taken else node.orelse, known)
                continue
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
            known.pop(name, None)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        ):
            known[node.targets[0].id] = node.value.value
        result.append(node)
    return result


def literal_bindings(statements: list[ast.stmt]) -> dict[str, object]:
    """The names `statements` bind to a literal constant (`device = "cuda"`), last binding kept."""
    known: dict[str, object] = {}
    for node in statements:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant):
                known[node.targets[0].id] = node.value.value
            else:
                known.pop(node.targets[0].id, None)
    return known


def _decide(test: ast.expr, known: dict[str, object]) -> bool | None:
    """The truth of `test` when it compares known names and literals; None when it cannot say."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(test.operand, known)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return None
    sides: list[object] = []
    for side in (test.left, test.comparators[0]):
        if isinstance(side, ast.Constant):
            sides.append(side.value)
        elif isinstance(side, ast.Name) and side.id in known:
            sides.append(known[side.id])
        else:
            return None
    left, right = sides
    operators = {ast.Eq: left == right, ast.NotEq: left != right, ast.Is: left is right, ast.IsNot: left is not right}
    return operators.get(type(test.ops[0]))
