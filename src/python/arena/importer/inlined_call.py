"""One call of a helper inlined: its parameters bound to the arguments, its body with its own
names kept off the loop's, what it returns bound to the loop's names."""

from __future__ import annotations

import ast
import copy

from arena.importer.outcome import LayoutNotRead
from arena.importer.syntax import Renamer


def inline_call(
    node: ast.stmt, call: ast.Call, helper: ast.FunctionDef, harness: str, outer: set[str] | None = None
) -> list[ast.stmt]:
    """`x, w = build(M, N)` as build's body: parameters bound to the arguments (a name given for a
    parameter the body does not rebind replaces it), the return bound to the loop's names. A
    helper's own name that the loop uses elsewhere (`outer`) is renamed (`x` to `x_build`), so the
    inlined body never rebinds the loop's."""
    shown = f"line {node.lineno}: `{ast.unparse(node)[:60]}`"
    body = _helper_body(helper, shown)
    params, given = _arguments(call, helper, shown)
    rebound = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names = _InlinedNames(helper.name, set(outer or ()) | {n.id for n in ast.walk(call) if isinstance(n, ast.Name)})
    names.avoid |= rebound | set(params)
    bindings: list[ast.stmt] = []
    for param in params:
        value = given[param]
        if isinstance(value, ast.Name) and param not in rebound:
            names.renames[param] = value
            continue
        name = names.fresh(param) if param in names.taken else param
        if name != param:
            names.renames[param] = ast.Name(name, ast.Load())
        bindings.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(value)), node))
    for local in sorted(rebound - set(params)):
        if local in names.taken:
            names.renames[local] = ast.Name(names.fresh(local), ast.Load())
    returned = body.pop().value if body and isinstance(body[-1], ast.Return) else None  # type: ignore[attr-defined]
    tail = _returned_into(node, returned, rebound - set(params), names.renames, f"{shown}: the helper {helper.name}()")
    renamer = Renamer(names.renames)
    body = [renamer.visit(statement) for statement in body]
    for statement in tail:  # the loop's own names stay; what they are given is the helper's
        statement.value = renamer.visit(statement.value)  # type: ignore[attr-defined]
    return bindings + [ast.fix_missing_locations(statement) for statement in body + tail]


class _InlinedNames:
    """The names an inlined helper's body may not take (`taken`: the loop's and the call's) and the
    renames that keep it off them (`x` to `x_build`, never one in `avoid`: the helper's own)."""

    def __init__(self, helper: str, taken: set[str]) -> None:
        self.helper = helper
        self.taken = taken
        self.avoid: set[str] = set()
        self.renames: dict[str, ast.expr] = {}

    def fresh(self, name: str) -> str:
        candidate, suffix = f"{name}_{self.helper}", 1
        while candidate in self.taken or candidate in self.avoid:
            candidate, suffix = f"{name}_{self.helper}_{suffix}", suffix + 1
        self.taken.add(candidate)
        return candidate


def _helper_body(helper: ast.FunctionDef, shown: str) -> list[ast.stmt]:
    """A copy of the helper's body without its docstring; LayoutNotRead where it takes *args or
    **kwargs or returns other than once, at its end."""
    spec = helper.args
    if spec.vararg or spec.kwarg or spec.posonlyargs:
        raise LayoutNotRead(f"{shown}: the helper {helper.name}() takes *args or **kwargs")
    body = [copy.deepcopy(statement) for statement in helper.body]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    returns = [n for statement in body for n in ast.walk(statement) if isinstance(n, ast.Return)]
    if len(returns) > 1 or (returns and not isinstance(body[-1], ast.Return)):
        raise LayoutNotRead(f"{shown}: the helper {helper.name}() returns other than at its end")
    return body


def _arguments(call: ast.Call, helper: ast.FunctionDef, shown: str) -> tuple[list[str], dict[str, ast.expr]]:
    """The helper's parameters, and what the call gives each (or its default)."""
    spec = helper.args
    params = [a.arg for a in spec.args] + [a.arg for a in spec.kwonlyargs]
    defaults = dict(zip([a.arg for a in spec.args][len(spec.args) - len(spec.defaults) :], spec.defaults))
    defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None})
    given: dict[str, ast.expr] = dict(zip([a.arg for a in spec.args], call.args))
    if len(call.args) > len(spec.args):
        raise LayoutNotRead(f"{shown}: the helper {helper.name}() is given too many arguments")
    for keyword in call.keywords:
        if keyword.arg is None:
            raise LayoutNotRead(f"{shown}: the helper {helper.name}() is given **kwargs")
        given[keyword.arg] = keyword.value
    for param in params:
        value = given.get(param, defaults.get(param))
        if value is None:
            raise LayoutNotRead(f"{shown}: the helper {helper.name}() is not given {param!r}")
        given[param] = value
    return params, given


def _returned_into(
    node: ast.stmt, returned: ast.expr | None, locals_: set[str], renames: dict[str, ast.expr], what: str
) -> list[ast.stmt]:
    """What follows the inlined body: the loop's names given what the helper returns (a local
    returned becomes the loop's name: in `renames`), a check the helper returns kept as a check."""
    tail: list[ast.stmt] = []
    if isinstance(node, ast.Assign):
        if returned is None:
            raise LayoutNotRead(f"{what} returns nothing")
        target = node.targets[0]
        targets = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        values = returned.elts if isinstance(returned, ast.Tuple) and len(targets) > 1 else [returned]
        if len(values) != len(targets) or not all(isinstance(t, ast.Name) for t in targets):
            raise LayoutNotRead(f"{what} returns other than the names it is unpacked into")
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        mapped: set[str] = set()
        for name, value in zip(names, values):
            own = value.id if isinstance(value, ast.Name) else None
            if _comparison(value):
                tail.append(ast.copy_location(ast.Expr(value), node))  # `ok = check(cfg)`: the check
            elif own is not None and own in locals_ and own not in mapped:
                renames[own] = ast.Name(name, ast.Load())  # the local is the loop's name from here on
                mapped.add(own)
            elif not (own is not None and own == name and own not in renames):
                tail.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))
    elif returned is not None and _comparison(returned):
        tail.append(ast.copy_location(ast.Expr(returned), node))
    return tail


def _comparison(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and (
        getattr(node.func, "attr", "") in ("allclose", "equal", "assert_close")
        or getattr(node.func, "id", "") in ("allclose", "equal", "assert_close")
    )
