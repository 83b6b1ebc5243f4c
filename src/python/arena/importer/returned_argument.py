"""A kernel function that writes into its tensor argument and returns that same argument
(`out = wrapper(z)` after `return Z_tensor`, rocmbench's `test_kernel_dot`), read as the call
that writes its argument in place.

The test compares `out`, which is the argument's own storage: what it checks is the argument as
the kernel leaves it. Arena's harness refuses an output whose storage is an input's, so the task
declares the argument written in place and the return ignored (`-> ignored`, docs/task-format.md),
which is what the test compares. Only where every `return` of the function returns bare tensor
parameters the body never rebinds, each passed by the test as a plain name: a view (`dst[:n]`)
is part of the argument, and a return that also holds a new tensor is an output of its own.
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from arena.importer.correctness import Comparison, TestLoop, result_names


def as_written_in_place(loop: TestLoop, function: ast.FunctionDef) -> TestLoop:
    """`loop` with `out = mod.fn(z, ...)` read as `mod.fn(z, ...)` writing z, `out` read as z,
    where fn returns its parameters as above; `loop` unchanged otherwise."""
    if not isinstance(loop.call, ast.Assign):
        return loop
    returned = _returned_parameters(function)
    if returned is None:
        return loop
    call = loop.kernel_call
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    given = {params[i]: arg for i, arg in enumerate(call.args) if i < len(params)}
    given |= {k.arg: k.value for k in call.keywords if k.arg}
    names = result_names(loop.call)
    if len(names) != len(returned):
        return loop
    renamed: dict[str, str] = {}
    for name, param in zip(names, returned):
        argument = given.get(param)
        if not isinstance(argument, ast.Name):
            return loop
        renamed[name] = argument.id
    if any(isinstance(arg, ast.Starred) for arg in call.args) or len(set(renamed.values())) != len(renamed):
        return loop
    statement = ast.copy_location(ast.Expr(call), loop.call)
    at = loop.statements.index(loop.call)
    after = [_renamed(node, renamed) for node in loop.statements[at + 1 :]]
    comparisons = tuple(
        dataclasses.replace(c, output=renamed.get(c.output, c.output), reference=_renamed(c.reference, renamed))
        for c in loop.comparisons
    )
    statements = (*loop.statements[:at], statement, *after)
    return dataclasses.replace(loop, statements=statements, call=statement, comparisons=_ordered(comparisons, call))


def _returned_parameters(function: ast.FunctionDef) -> list[str] | None:
    """The parameters every `return` returns, as bare names the body never rebinds; None otherwise."""
    params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    rebound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    found: list[str] | None = None
    for node in _returns(function.body):
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value] if node.value else []
        names = [v.id for v in values if isinstance(v, ast.Name) and v.id in params and v.id not in rebound]
        if not values or len(names) != len(values) or (found is not None and names != found):
            return None
        found = names
    return found


def _returns(body: list[ast.stmt]) -> list[ast.Return]:
    """The function's own `return` statements (not those of functions it defines)."""
    found: list[ast.Return] = []
    for node in body:
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                found += _returns([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)])
                found += [
                    r for h in getattr(node, field, []) if isinstance(h, ast.ExceptHandler) for r in _returns(h.body)
                ]
    return found


def _renamed(node: ast.AST, renamed: dict[str, str]) -> ast.AST:  # type: ignore[misc]
    copied = copy.deepcopy(node)
    for child in ast.walk(copied):
        if isinstance(child, ast.Name) and child.id in renamed:
            child.id = renamed[child.id]
    return copied


def _ordered(comparisons: tuple[Comparison, ...], call: ast.Call) -> tuple[Comparison, ...]:
    """The comparisons in the call's order of the arguments they compare (a written loop's order)."""
    order = [arg.id for arg in call.args if isinstance(arg, ast.Name)]
    return tuple(sorted(comparisons, key=lambda c: order.index(c.output) if c.output in order else len(order)))
