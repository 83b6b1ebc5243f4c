"""A kernel called through a `torch.autograd.Function` (rocmbench: `attention = _attention.apply`,
then `tri_out = attention(q, k, v, sm_scale)` in the test).

`Cls.apply(*args)` runs `Cls.forward(ctx, *args)`; on inputs that need no gradient (arena's)
that is all it does. So the importer reads `name = Cls.apply`, where Cls is a class of the file
deriving from `torch.autograd.Function` with a `@staticmethod forward(ctx, ...)`, as a function
`name` whose parameters are forward's less `ctx` and whose body is forward's less the statements
that only keep values for the backward pass (`ctx.save_for_backward(...)`, `ctx.x = ...`): the
function the test calls, read like any other. The entry stays `name` itself, which arena calls
as the test does. A forward that reads `ctx` otherwise (`ctx.mark_dirty(y)`,
`ctx.needs_input_grad`) is refused where the test calls it, as is a test that differentiates
through the kernel (`y.backward(dy)`, `x.grad`): arena checks a kernel's outputs, not gradients.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from arena.importer.outcome import GradientCheck

_BASES = frozenset(("torch.autograd.Function", "autograd.Function", "Function"))
_BOOKKEEPING = frozenset(("save_for_backward", "mark_non_differentiable", "set_materialize_grads"))


@dataclass(frozen=True)
class ApplyAlias:
    """`name = Cls.apply`, read as a function (`function`), or why it cannot be (`refusal`)."""

    function: ast.FunctionDef
    refusal: str | None


def apply_aliases(tree: ast.Module) -> dict[str, ApplyAlias]:
    """The file's top-level `name = Cls.apply` of its autograd Functions, by name."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and _is_autograd_function(n)}
    aliases: dict[str, ApplyAlias] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if not (isinstance(value, ast.Attribute) and value.attr == "apply" and isinstance(value.value, ast.Name)):
            continue
        owner = classes.get(value.value.id)
        forward = _forward(owner) if owner is not None else None
        if owner is not None and forward is not None:
            aliases[node.targets[0].id] = _as_function(node.targets[0].id, forward, owner.name)
    return aliases


def with_apply_functions(tree: ast.Module) -> ast.Module:
    """`tree` with each `name = Cls.apply` replaced by the function it is read as (for reading only:
    the kernel file is copied as it is)."""
    aliases = apply_aliases(tree)
    if not aliases:
        return tree
    body: list[ast.stmt] = []
    for node in tree.body:
        name = node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) else None
        body.append(aliases[name].function if name in aliases else node)
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def refuse_unreadable_forward(tree: ast.Module, name: str) -> None:
    """NotImportable where the test calls `name = Cls.apply` whose forward cannot be read."""
    alias = apply_aliases(tree).get(name)
    if alias is not None and alias.refusal is not None:
        raise GradientCheck(alias.refusal)


def refuse_gradients(body: list[ast.stmt], test: str) -> None:
    """NotImportable where the test (`test`, as the message names it) runs a backward pass or reads
    a gradient."""
    for statement in body:
        for node in ast.walk(statement):
            backward = isinstance(node, ast.Attribute) and node.attr == "backward"
            if backward or (isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load)):
                raise GradientCheck(
                    f"{test} differentiates through the kernel (line {statement.lineno}: "
                    f"`{ast.unparse(statement).splitlines()[0][:60]}`); arena checks a kernel's outputs, not gradients"
                )


def _is_autograd_function(node: ast.ClassDef) -> bool:
    return any(ast.unparse(base) in _BASES for base in node.bases)


def _forward(owner: ast.ClassDef) -> ast.FunctionDef | None:
    for node in owner.body:
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            static = [ast.unparse(d) for d in node.decorator_list] == ["staticmethod"]
            return node if static and node.args.args else None
    return None


def _as_function(name: str, forward: ast.FunctionDef, owner: str) -> ApplyAlias:
    function = copy.deepcopy(forward)
    ctx = function.args.args.pop(0).arg
    function.name = name
    function.decorator_list = []
    kept: list[ast.stmt] = []
    refusal = None
    for statement in function.body:
        if not _reads(statement, ctx):
            kept.append(statement)
        elif not _bookkeeping(statement, ctx) and refusal is None:
            shown = ast.unparse(statement).splitlines()[0][:60]
            refusal = (
                f"{owner}.forward reads `{ctx}` beyond keeping values for backward (line {statement.lineno}: `{shown}`)"
            )
    function.body = kept or [ast.Pass()]
    return ApplyAlias(ast.fix_missing_locations(function), refusal)


def _reads(statement: ast.stmt, ctx: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == ctx for n in ast.walk(statement))


def _bookkeeping(statement: ast.stmt, ctx: str) -> bool:
    """`ctx.save_for_backward(...)` (and its like), or `ctx.a = value` of a value not read from ctx."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == ctx
            and func.attr in _BOOKKEEPING
            and not any(_reads(ast.Expr(a), ctx) for a in statement.value.args)
        )
    if isinstance(statement, ast.Assign):
        return all(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == ctx
            for t in statement.targets
        ) and not _reads(ast.Expr(statement.value), ctx)
    return False
