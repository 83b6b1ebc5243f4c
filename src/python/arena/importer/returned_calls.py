"""Calls of the test file's own small functions read as the expression they return.

rocmbench's `multreduce_matmul_*` tests compute the reference and the kernel's result through one
function, picked by a string (`c_torch = matmul("torch", a, b, bias)`, `c_triton = matmul("triton-dot",
a, b, bias)`), whose body checks its arguments (`assert a.is_cuda`, ...) and then returns
`torch_matmul(a, b, bias)` under `if provider == "torch":`; they compare through a function of their
own (`assert allclose(c_torch, c_triton)`, `def allclose(x, y): return torch.allclose(x, y, atol=1e-3,
rtol=1e-2)`). Each such call is the returned expression, the function's parameters replaced by what
the call gives them: the same value, the asserts before it aside (they check, they change nothing).

Read so, and nothing else: a call of a top-level function of the file (no `*args`, `**kwargs` or
decorators) given names and constants only, whose body before the `return` is a docstring, `assert`
statements and `if`s holding only asserts; and either the call gives a parameter a constant that an
`if <param> == <constant>:` holding one `return` takes (the first such `if` of the body; one for
another constant is passed over), or the call is what an `assert` tests and the function returns a
comparison (`torch.allclose`, `torch.equal`, `assert_close`). Any other call stays as it is (the
kernel's call among them: `matmul("triton-dot", ...)` takes no such branch).
"""

from __future__ import annotations

import ast
import copy
from typing import Literal

from arena.importer.outcome import LayoutNotRead

_COMPARED = frozenset(("allclose", "equal", "assert_close"))


def inline_returned_calls(body: list[ast.stmt], functions: dict[str, ast.FunctionDef]) -> list[ast.stmt]:
    """`body` with each call read as above replaced by the expression its function returns (not
    where that expression reads a name `body` binds: there it would read the test's)."""
    stored = {n.id for node in body for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return [_Inliner(functions, stored).visit(copy.deepcopy(node)) for node in body]


def refuse_own_comparisons(body: list[ast.stmt], functions: dict[str, ast.FunctionDef], shown: str) -> None:
    """LayoutNotRead where the test still calls a function of its file named as a torch comparison
    (`allclose(x, y)` not read as its return above): its own tolerance would be read as torch's."""
    own = [
        (call.lineno, call.func.id)
        for node in body
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in functions
    ]
    for line, name in own:
        if name in _COMPARED:
            raise LayoutNotRead(
                f"line {line}: the test compares through {name}(), a function of {shown} "
                "that is not one return of a comparison"
            )


class _Inliner(ast.NodeTransformer):
    def __init__(self, functions: dict[str, ast.FunctionDef], stored: set[str]) -> None:
        self.functions = functions
        self.stored = stored

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.test, ast.Call):
            returned = self._returned(node.test, compared=True)
            if returned is not None:
                node.test = returned
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        return self._returned(node, compared=False) or node

    def _returned(self, call: ast.Call, compared: bool) -> ast.expr | None:
        function = self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if function is None:
            return None
        given = _given(call, function)
        if given is None:
            return None
        for statement in _body(function):
            if isinstance(statement, ast.Assert) or _asserts_only(statement):
                continue
            taken = _branch_taken(statement, given)
            if compared and isinstance(statement, ast.Return) and _compares(statement.value):
                taken = statement.value
            if taken is False:
                continue
            if taken is None or ({n.id for n in ast.walk(taken) if isinstance(n, ast.Name)} - set(given)) & self.stored:
                return None
            return _substituted(taken, given, call)
        return None


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    return function.body[1:] if ast.get_docstring(function) is not None else function.body


def _given(call: ast.Call, function: ast.FunctionDef) -> dict[str, ast.expr] | None:
    """Each parameter's argument (names and constants only; a default where the call gives none);
    None where the call or the function is not of that plain kind."""
    spec = function.args
    if function.decorator_list or spec.vararg or spec.kwarg or spec.posonlyargs or spec.kwonlyargs:
        return None
    params = [a.arg for a in spec.args]
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given: dict[str, ast.expr] = dict(zip(params, call.args))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in params or keyword.arg in given:
            return None
        given[keyword.arg] = keyword.value
    defaults = dict(zip(params[len(params) - len(spec.defaults) :], spec.defaults))
    for param in params:
        given.setdefault(param, defaults.get(param))  # type: ignore[arg-type]
    if not all(isinstance(v, (ast.Name, ast.Constant)) for v in given.values()):
        return None
    return given


def _asserts_only(statement: ast.stmt) -> bool:
    """An `if` whose branches hold only asserts (and such `if`s): it checks, it changes nothing."""
    return isinstance(statement, ast.If) and all(
        isinstance(s, ast.Assert) or _asserts_only(s) for s in statement.body + statement.orelse
    )


def _branch_taken(statement: ast.stmt, given: dict[str, ast.expr]) -> ast.expr | Literal[False] | None:
    """For `if <param> == <constant>: return e` (no else) where the call gives param a constant:
    e when the two are equal, False when they differ (the `if` passed over); None otherwise."""
    if not (isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1):
        return None
    test, returned = statement.test, statement.body[0]
    if not (isinstance(returned, ast.Return) and returned.value is not None and isinstance(test, ast.Compare)):
        return None
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name) and s.id in given]
    constants = [s.value for s in sides if isinstance(s, ast.Constant)]
    if len(names) != 1 or len(constants) != 1 or not isinstance(given[names[0]], ast.Constant):
        return None
    return returned.value if given[names[0]].value == constants[0] else False  # type: ignore[attr-defined]


def _compares(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Call) and (
        getattr(node.func, "attr", "") in _COMPARED or getattr(node.func, "id", "") in _COMPARED
    )


def _substituted(expression: ast.expr, given: dict[str, ast.expr], call: ast.Call) -> ast.expr:
    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            value = given.get(node.id)
            return ast.copy_location(copy.deepcopy(value), node) if value is not None else node

    replaced = Substitute().visit(copy.deepcopy(expression))
    return ast.fix_missing_locations(ast.copy_location(replaced, call))
