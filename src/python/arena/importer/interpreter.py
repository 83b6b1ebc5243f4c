"""Following Python test code and kernel wrappers on shapes alone, from their `ast`.

For one case at a time: names hold concrete numbers and tuples, tensors are their shape and dtype
(arena.importer.values), torch calls follow arena.importer.torch_rules. Kernel launches and other
expression statements are skipped (they cannot rebind a name); an `if` whose test can be read
takes its branch; loops are not run, so the names they assign become Unknown. Nothing is
executed: an operation the reading does not model raises CannotRead, which says which.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping

from arena.importer import python_rules, torch_rules
from arena.importer.values import (
    CannotRead,
    DType,
    Function,
    Method,
    Module,
    SourceModule,
    Tensor,
    Unknown,
    describe,
    same_value,
)

MAX_STEPS = 200_000  # nodes evaluated per interpreter: enough for any test, bounded for any input
MAX_DEPTH = 12  # nested calls of functions defined in the code

_TENSOR_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floor_divide", ast.Mod: "remainder",
    ast.Pow: "pow", ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
    ast.LShift: "mul", ast.RShift: "div",
}  # fmt: skip

_OPAQUE = {
    ast.Lambda: "a lambda", ast.JoinedStr: "an f-string", ast.Dict: "a dict", ast.Set: "a set",
    ast.ListComp: "a comprehension", ast.SetComp: "a comprehension", ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
}  # fmt: skip


@dataclass
class Scope:
    """A function's (or a test loop's) local names over its module's names."""

    names: dict[str, Any] = field(default_factory=dict)
    module: Mapping[str, Any] = field(default_factory=dict)

    def lookup(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in self.module:
            return self.module[name]
        if name in python_rules.BUILTINS:
            return Module(f"builtins.{name}")
        raise CannotRead(f"name {name!r} is not defined where it is used")


@dataclass(frozen=True)
class Returned:
    value: Any


def module_scope(tree: ast.Module, interpreter: Interpreter) -> dict[str, Any]:
    """The names a module defines at its top level: imports, functions, and assignments whose
    values can be read (others become Unknown). The module's other statements are not run."""
    scope: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scope.update(imported_names(node))
        elif isinstance(node, ast.FunctionDef):
            scope[node.name] = Function(node, scope)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            try:
                value = interpreter.evaluate(node.value, Scope({}, scope))
            except CannotRead as error:
                value = Unknown(str(error))
            scope.update({target.id: value for target in node.targets if isinstance(target, ast.Name)})
    return scope


def imported_names(node: ast.Import | ast.ImportFrom) -> dict[str, Module]:
    if isinstance(node, ast.Import):
        return {
            alias.asname or alias.name.split(".")[0]: Module(alias.name if alias.asname else alias.name.split(".")[0])
            for alias in node.names
        }
    prefix = "." * node.level + (node.module or "")
    return {alias.asname or alias.name: Module(f"{prefix}.{alias.name}") for alias in node.names}


class Interpreter:
    def __init__(self) -> None:
        self.steps = 0
        self.depth = 0

    def evaluate(self, node: ast.expr, scope: Scope) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise CannotRead("the code is too long to follow")
        if isinstance(node, ast.Dict) and _literal_keys(node):  # a table looked up by a case value
            keys = [key.value for key in node.keys]  # type: ignore[union-attr]
            return {key: self._held(value, scope) for key, value in zip(keys, node.values)}
        if type(node) in _OPAQUE:  # a value the reading does not hold: fails only where it is used
            return Unknown(f"{_OPAQUE[type(node)]} (line {getattr(node, 'lineno', '?')})")
        method = getattr(self, f"_{type(node).__name__.lower()}", None)
        if method is None:
            raise CannotRead(f"a {type(node).__name__} expression (line {getattr(node, 'lineno', '?')})")
        return method(node, scope)

    def _held(self, node: ast.expr, scope: Scope) -> Any:
        """`node`'s value, or Unknown: a container holds what cannot be read until it is used."""
        try:
            return self.evaluate(node, scope)
        except CannotRead as error:
            return Unknown(str(error))

    # ---- statements

    def run_block(self, body: list[ast.stmt], scope: Scope) -> Returned | None:
        """Run `body` on shapes; Returned when it reaches a `return`."""
        for statement in body:
            returned = self.run_statement(statement, scope)
            if returned is not None:
                return returned
        return None

    def run_statement(self, node: ast.stmt, scope: Scope) -> Returned | None:
        _forget_changed_lists(node, scope)
        if isinstance(node, ast.Return):
            return Returned(None if node.value is None else self.evaluate(node.value, scope))
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self._assign(node, scope)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            scope.names.update(imported_names(node))
        elif isinstance(node, ast.If):
            return self._if(node, scope)
        elif isinstance(node, (ast.With, ast.Try)):
            for item in getattr(node, "items", []):
                self.bind(item.optional_vars, Unknown("a `with` target"), scope)
            return self.run_block(node.body, scope)
        elif isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            _forget_assigned(node, scope, "assigned in a loop")
            if _returns(node):
                raise CannotRead(f"a return inside a loop (line {node.lineno})")
        elif isinstance(node, ast.Raise):
            raise CannotRead(f"the code raises an exception (line {node.lineno})")
        elif isinstance(node, ast.FunctionDef):
            scope.names[node.name] = Unknown(f"the nested function {node.name}")
        return None

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: Scope) -> None:
        if node.value is None:
            return
        value_node: ast.expr = node.value
        if isinstance(node, ast.AugAssign) and not isinstance(node.target, ast.Name):
            return  # `x[i] += ...` writes into an object; it rebinds no name
        if isinstance(node, ast.AugAssign):
            value_node = ast.BinOp(left=_as_load(node.target), op=node.op, right=node.value)
            ast.copy_location(value_node, node)
        try:
            value = self.evaluate(value_node, scope)
        except CannotRead as error:
            value = Unknown(str(error))  # fails only if a later statement needs it
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            self.bind(target, value, scope)

    def bind(self, target: ast.expr | None, value: Any, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            scope.names[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = list(value) if isinstance(value, (tuple, list)) else None
            if items is not None and len(items) != len(target.elts):
                raise CannotRead(f"unpacking {len(items)} values into {len(target.elts)} names")
            for index, element in enumerate(target.elts):
                part = items[index] if items is not None else Unknown(f"unpacking {describe(value)}")
                self.bind(element.value if isinstance(element, ast.Starred) else element, part, scope)
        # Subscript and attribute targets write into an object; they rebind no name.

    def _if(self, node: ast.If, scope: Scope) -> Returned | None:
        try:
            test = self.truth(self.evaluate(node.test, scope))
        except CannotRead:
            if _returns(node):
                raise CannotRead(f"a return inside an `if` whose test cannot be read (line {node.lineno})") from None
            branches = self._both_branches(node, scope)
            _forget_assigned(node, scope, f"assigned under an `if` whose test cannot be read (line {node.lineno})")
            scope.names.update(branches)
            return None
        return self.run_block(node.body if test else node.orelse, scope)

    def _both_branches(self, node: ast.If, scope: Scope) -> dict[str, Any]:
        """The names an `if` whose test cannot be read assigns that hold the same reading after
        either branch (`if a.stride(-1) != 1: a = a.contiguous()`: a tensor of a's shape and dtype
        either way): the reading after the `if` does not depend on the test."""
        after: list[dict[str, Any]] = []
        for block in (node.body, node.orelse):
            branch = Scope(dict(scope.names), scope.module)
            try:
                self.run_block(block, branch)
            except CannotRead:
                return {}
            after.append(branch.names)
        assigned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        kept: dict[str, Any] = {}
        for name in assigned:
            first, second = after[0].get(name, _ABSENT), after[1].get(name, _ABSENT)
            if _same_reading(first, second):
                kept[name] = first
        return kept

    def truth(self, value: Any) -> bool:
        if isinstance(value, Unknown):
            raise value.fail()
        if isinstance(value, (Tensor, Module, Function, Method)):
            raise CannotRead(f"the truth of {describe(value)}")
        return bool(value)

    # ---- calls

    def call_function(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.depth >= MAX_DEPTH:
            raise CannotRead("calls nest too deeply to follow")
        self.depth += 1
        try:
            scope = Scope(self._parameters(function, args, kwargs), function.scope)
            returned = self.run_block(function.node.body, scope)
        finally:
            self.depth -= 1
        return None if returned is None else returned.value

    def _parameters(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        spec, name = function.node.args, function.node.name
        positional = [a.arg for a in spec.posonlyargs + spec.args]
        names: dict[str, Any] = dict(zip(positional, args))
        if len(args) > len(positional):
            if spec.vararg is None:
                raise CannotRead(f"{name}() is given {len(args)} positional arguments")
            names[spec.vararg.arg] = tuple(args[len(positional) :])
        keywords = set(positional) | {a.arg for a in spec.kwonlyargs}
        for key, value in kwargs.items():
            if key in names or (key not in keywords and spec.kwarg is None):
                raise CannotRead(f"{name}() gets keyword argument {key!r} it does not take")
            names[key] = value if key in keywords else Unknown("**kwargs")
        defaults = dict(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults))
        defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None})
        for key in positional + [a.arg for a in spec.kwonlyargs]:
            if key not in names:
                if key not in defaults:
                    raise CannotRead(f"{name}() is not given its argument {key!r}")
                names[key] = self.evaluate(defaults[key], Scope({}, function.scope))
        if spec.vararg is not None:
            names.setdefault(spec.vararg.arg, ())
        if spec.kwarg is not None:
            names[spec.kwarg.arg] = Unknown("**kwargs")
        return names

    def _call(self, node: ast.Call, scope: Scope) -> Any:
        func = self.evaluate(node.func, scope)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = self.evaluate(arg.value, scope)
                if not isinstance(spread, (tuple, list)):
                    raise CannotRead(f"*{describe(spread)} in a call")
                args += list(spread)
            else:
                args.append(self.evaluate(arg, scope))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise CannotRead(f"**kwargs in a call (line {node.lineno})")
            kwargs[keyword.arg] = self.evaluate(keyword.value, scope)
        if isinstance(func, Function):
            return self.call_function(func, args, kwargs)
        if isinstance(func, (Method, Module)):
            shown = f"tensor.{func.name}" if isinstance(func, Method) else func.path
            try:
                if isinstance(func, Method):
                    return torch_rules.call_method(func.tensor, func.name, args, kwargs)
                if func.path.startswith("builtins."):
                    return python_rules.call_builtin(func.path.split(".", 1)[1], args)
                return torch_rules.call_torch(func.path, args, kwargs)
            except (TypeError, AttributeError, IndexError, KeyError, ValueError):
                # A rule met arguments of a kind it does not model (an Unknown where a tensor goes).
                reasons = [a.reason for a in [*args, *kwargs.values()] if isinstance(a, Unknown)]
                raise CannotRead(reasons[0] if reasons else f"{shown}() with these arguments") from None
        if isinstance(func, Unknown):
            raise func.fail()
        raise CannotRead(f"calling {describe(func)} (line {node.lineno})")

    # ---- expressions, one method per node type

    def _constant(self, node: ast.Constant, scope: Scope) -> Any:
        return node.value

    def _name(self, node: ast.Name, scope: Scope) -> Any:
        return scope.lookup(node.id)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> Any:
        value = self.evaluate(node.value, scope)
        if isinstance(value, Module):
            return torch_rules.attribute_of_module(value, node.attr)
        if isinstance(value, Tensor):
            if node.attr in ("shape", "dtype", "ndim", "T", "mT", "device", "is_cuda", "data", "grad"):
                return torch_rules.tensor_attribute(value, node.attr)
            return Method(value, node.attr)
        if isinstance(value, SourceModule):
            if node.attr not in value.names:
                raise CannotRead(f"{value.label} defines no {node.attr!r}")
            return value.names[node.attr]
        if isinstance(value, Unknown):
            return value
        if isinstance(value, DType):
            return Unknown(f"dtype attribute .{node.attr}")
        raise CannotRead(f"attribute .{node.attr} of {describe(value)} (line {node.lineno})")

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Any:
        value = self.evaluate(node.value, scope)
        index = self.evaluate(node.slice, scope)
        if isinstance(value, Unknown):
            raise value.fail()
        if isinstance(value, Tensor):
            return torch_rules.index_tensor(value, index)
        if isinstance(value, dict) and isinstance(index, (int, str)) and not isinstance(index, bool):
            if index not in value:
                raise CannotRead(f"key {index!r} is not in the dict (line {node.lineno})")
            return value[index]
        if isinstance(value, (tuple, list, str)) and isinstance(index, (int, slice)):
            try:
                return value[index]
            except IndexError:
                raise CannotRead(f"index {index} out of range (line {node.lineno})") from None
        raise CannotRead(f"indexing {describe(value)} (line {node.lineno})")

    def _slice(self, node: ast.Slice, scope: Scope) -> slice:
        parts = [None if part is None else self.evaluate(part, scope) for part in (node.lower, node.upper, node.step)]
        if not all(part is None or (isinstance(part, int) and not isinstance(part, bool)) for part in parts):
            raise CannotRead(f"a slice of non-integers (line {node.lineno})")
        return slice(*parts)

    def _tuple(self, node: ast.Tuple | ast.List, scope: Scope) -> tuple:
        items: list[Any] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                items += list(self.evaluate(element.value, scope))
            else:
                items.append(self.evaluate(element, scope))
        return tuple(items)

    _list = _tuple

    def _binop(self, node: ast.BinOp, scope: Scope) -> Any:
        left, right = self.evaluate(node.left, scope), self.evaluate(node.right, scope)
        for value in (left, right):
            if isinstance(value, Unknown):
                raise value.fail()
        if isinstance(node.op, ast.MatMult):
            if isinstance(left, Tensor) and isinstance(right, Tensor):
                return torch_rules.matmul(left, right)
            raise CannotRead(f"@ of {describe(left)} and {describe(right)}")
        if isinstance(left, Tensor) or isinstance(right, Tensor):
            result = torch_rules.binary(_TENSOR_OPS[type(node.op)], left, right)
            return torch_rules.progressed(type(node.op), left, right, result)
        return python_rules.number_op(node, left, right)

    def _unaryop(self, node: ast.UnaryOp, scope: Scope) -> Any:
        value = self.evaluate(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return not self.truth(value)
        if isinstance(value, Tensor):
            inverted = isinstance(node.op, ast.Invert)
            return torch_rules.call_method(value, "bitwise_not", [], {}) if inverted else value
        if isinstance(value, (int, float)):
            return python_rules.UNARY_OPS[type(node.op)](value)
        raise CannotRead(f"a unary operator on {describe(value)}")

    def _boolop(self, node: ast.BoolOp, scope: Scope) -> Any:
        value: Any = None
        for operand in node.values:
            value = self.evaluate(operand, scope)
            if self.truth(value) == isinstance(node.op, ast.Or):
                return value
        return value

    def _compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.evaluate(node.left, scope)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.evaluate(right_node, scope)
            if isinstance(op, (ast.Is, ast.IsNot)):
                same = (left is right) if left is None or right is None or isinstance(left, bool) else left == right
                result = same if isinstance(op, ast.Is) else not same
            elif isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (tuple, list, str)):
                    raise CannotRead(f"`in` {describe(right)}")
                result = (left in right) == isinstance(op, ast.In)
            elif isinstance(left, Tensor) or isinstance(right, Tensor):
                return torch_rules.binary(python_rules.COMPARE[type(op)][0], left, right)
            else:
                for value in (left, right):
                    if isinstance(value, Unknown):
                        raise value.fail()
                result = python_rules.COMPARE[type(op)][1](left, right)
            if not result:
                return False
            left = right
        return True

    def _ifexp(self, node: ast.IfExp, scope: Scope) -> Any:
        return self.evaluate(node.body if self.truth(self.evaluate(node.test, scope)) else node.orelse, scope)

    def _namedexpr(self, node: ast.NamedExpr, scope: Scope) -> Any:
        value = self.evaluate(node.value, scope)
        scope.names[node.target.id] = value
        return value


def _returns(node: ast.stmt) -> bool:
    return any(isinstance(child, ast.Return) for child in ast.walk(node))


_ABSENT = object()


def _same_reading(first: Any, second: Any) -> bool:
    """Whether two readings are one: tensors of one shape, dtype and known values, or equal numbers,
    strings, bools, dtypes or None."""
    if isinstance(first, Tensor) and isinstance(second, Tensor):
        return first == second and first.progression == second.progression
    plain = (int, float, str, DType, type(None))
    return isinstance(first, plain) and isinstance(second, plain) and same_value(first, second)


def _forget_assigned(node: ast.stmt, scope: Scope, reason: str) -> None:
    """Every name `node` may assign becomes Unknown: the reading did not run it."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            scope.names[child.id] = Unknown(f"{child.id!r} is {reason}")


def _as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    raise CannotRead("augmented assignment to an element")


def _literal_keys(node: ast.Dict) -> bool:
    """Every key a string or int literal (no `**spread`)."""
    return all(
        isinstance(key, ast.Constant) and isinstance(key.value, (str, int)) and not isinstance(key.value, bool)
        for key in node.keys
    )


# List methods that change the list in place: the reading holds a list as the tuple it was built as.
_LIST_CHANGES = frozenset("append extend insert pop remove sort reverse clear".split())


def _forget_changed_lists(node: ast.stmt, scope: Scope) -> None:
    """A list that `node` changes in place (`ref.extend(...)`, `ref[i] = v`) is no longer known:
    the reading holds lists as the values they were built with, and `torch.tensor(ref)` of those
    would be a tensor of other values (its shape among them)."""
    for inner in ast.walk(node):
        name: str | None = None
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in _LIST_CHANGES:
            target = inner.func.value
            name = target.id if isinstance(target, ast.Name) else None
        elif isinstance(inner, ast.Subscript) and isinstance(inner.ctx, (ast.Store, ast.Del)):
            name = inner.value.id if isinstance(inner.value, ast.Name) else None
        if name is not None and isinstance(scope.names.get(name), (tuple, list)):
            scope.names[name] = Unknown(f"a list changed in place (line {inner.lineno})")
