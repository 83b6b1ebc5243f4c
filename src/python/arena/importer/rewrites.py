"""Rewrites of a test's statements into equivalent ones the readers follow (shared by
arena.importer.correctness, .harness and .pytest_layout): a helper that draws the inputs or
calls the kernel inlined, a seeding helper as its torch.manual_seed, `try:` bodies in place of the
try, printing and clean-up left out, `f(*args, **kwargs)` of literal tuples and dicts spread, an
integer tensor a loop fills with a progression as its torch.arange.
"""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.draws import INTEGER_DTYPES
from arena.importer.outcome import LayoutNotRead

MAX_INLINE_DEPTH = 3
_DRAWS = frozenset(("randn", "rand", "randint", "randperm", "zeros", "ones", "full", "empty", "arange", "tensor"))
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


def inline_helpers(
    body: list[ast.stmt],
    functions: dict[str, ast.FunctionDef],
    kernel: dict[str, str],
    harness: str,
    depth: int,
    module: str = "",
) -> list[ast.stmt]:
    """Helpers that seed, draw the inputs or call the kernel, called before the kernel is, inlined
    (the kernel: a function of `kernel`, or any function of the kernel module named `module`)."""
    result: list[ast.stmt] = []
    called = written = False
    inlined_calls: dict[str, tuple[ast.Call, ast.expr, int]] = {}  # helper -> its call, its target, where
    for position, node in enumerate(body):
        if module and any(
            isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == module
            for n in ast.walk(node)
        ):
            called = True
            written = written or not isinstance(node, ast.Assign)  # `mod.fn(x, out)` may write x
        call = _helper_call(node, functions)
        helper = functions[call.func.id] if call is not None and isinstance(call.func, ast.Name) else None
        earlier = inlined_calls.get(helper.name) if helper is not None else None
        if call is not None and helper is not None and earlier is not None and not written:
            bound = {  # what the earlier call's target holds, as the inlined statements bind it
                t.id: statement.value
                for statement in result
                if isinstance(statement, ast.Assign)
                for t in statement.targets
                if isinstance(t, ast.Name)
            }
            taken = {n.id for statement in body + result for n in ast.walk(statement) if isinstance(n, ast.Name)}
            again = _drawn_again(node, call, helper, earlier, body[earlier[2] + 1 : position], bound, taken)
            if again is not None:
                result += again
                continue
        if call is not None and helper is not None and not called:
            seed = _seed_of(helper, call)
            if seed is not None:
                result.append(ast.copy_location(ast.Expr(_manual_seed(seed)), node))
                continue
            feeds = _stored(node) & _kernel_arguments(body, kernel, module)  # the helper makes its inputs
            if depth < MAX_INLINE_DEPTH and ((_draws(helper) and feeds) or _calls_kernel(helper, kernel)):
                outer = {
                    n.id for other in body if other is not node for n in ast.walk(other) if isinstance(n, ast.Name)
                }
                inlined = _inline_call(node, call, helper, harness, outer)
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    inlined_calls[helper.name] = (call, node.targets[0], position)
                result += inline_helpers(flatten(inlined), functions, kernel, harness, depth + 1, module)
                called = called or _calls_kernel(helper, kernel)
                continue
        called = called or any(_calls_kernel(child, kernel) for child in [node])
        result.append(node)
    return result


def _drawn_again(
    node: ast.stmt,
    call: ast.Call,
    helper: ast.FunctionDef,
    earlier: tuple[ast.Call, ast.expr, int],
    between: list[ast.stmt],
    literals: dict[str, ast.expr],
    taken: set[str],
) -> list[ast.stmt] | None:
    """`cpu_inputs = make_inputs(n, "cpu")` after `inputs = make_inputs(n, device)` was inlined,
    where make_inputs seeds itself with a constant before it draws and reads the one argument that
    differs only to move what it drew (`x = x.to(device)`, under `if device != "cpu":`): the same
    values, so each of inputs' names moved where the call would place it, bound there (`cpu_inputs_0
    = x.to("cpu")`, ...: what the kernel writes later is not seen), and `cpu_inputs = (cpu_inputs_0,
    ...)`. Returns those statements; None when that does not hold."""
    first, target, _ = earlier
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    params = [a.arg for a in helper.args.args]
    if helper.args.vararg or helper.args.kwarg or len(call.args) != len(first.args):
        return None
    if sorted(k.arg or "" for k in call.keywords) != sorted(k.arg or "" for k in first.keywords):
        return None
    pairs = [(params[i] if i < len(params) else "", a, b) for i, (a, b) in enumerate(zip(first.args, call.args))]
    mine = {k.arg: k.value for k in call.keywords}
    pairs += [(k.arg or "", k.value, mine[k.arg]) for k in first.keywords]
    differing = [(param, value) for param, old, value in pairs if not _same(old, value)]
    if len(differing) != 1 or not differing[0][0]:
        return None
    param, value = differing[0]
    read = {n.id for _, old, _ in pairs for n in ast.walk(old) if isinstance(n, ast.Name)}
    if read & {name for statement in between for name in _stored(statement)}:
        return None  # an argument rebound between the two calls
    if not (_seeds_before_drawing(helper) and _only_moves(helper, param)):
        return None
    made = literals.get(target.id) if isinstance(target, ast.Name) else target
    if not (isinstance(made, ast.Tuple) and all(isinstance(e, ast.Name) for e in made.elts)):
        return None
    name = node.targets[0].id
    names = [f"{name}_{k}" for k in range(len(made.elts))]
    if taken & set(names):
        return None
    statements: list[ast.stmt] = [
        ast.Assign(
            [ast.Name(moved, ast.Store())],
            ast.Call(ast.Attribute(copy.deepcopy(element), "to", ast.Load()), [copy.deepcopy(value)], []),
        )
        for moved, element in zip(names, made.elts)
    ]
    statements.append(ast.Assign([node.targets[0]], ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())))
    return [ast.fix_missing_locations(ast.copy_location(statement, node)) for statement in statements]


def _seeds_before_drawing(helper: ast.FunctionDef) -> bool:
    """The helper's first statement that draws or seeds is `torch.manual_seed(<a constant>)`."""
    for statement in helper.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            seeded = statement.value
            if ast.unparse(seeded.func) == "torch.manual_seed":
                return len(seeded.args) == 1 and isinstance(seeded.args[0], ast.Constant)
        if _draws(statement) or any(
            isinstance(n, ast.Call) and ast.unparse(n.func) == "torch.manual_seed" for n in ast.walk(statement)
        ):
            return False
    return False


def _only_moves(helper: ast.FunctionDef, param: str) -> bool:
    """`param` is read only as `.to(param)` in `x = y.to(param)` statements, and in the test of
    `if`s holding only such statements: it places what the helper drew and changes no value."""

    def moves(statement: ast.stmt) -> bool:
        value = statement.value if isinstance(statement, ast.Assign) else None
        return (
            is_call_with_one_argument(value, ".to")
            and not value.keywords
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == param
            and not any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(value.func))
        )

    def clean(statements: list[ast.stmt]) -> bool:
        for statement in statements:
            if moves(statement):
                continue
            if isinstance(statement, ast.If) and all(moves(s) for s in statement.body + statement.orelse):
                continue
            if any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(statement)):
                return False
        return True

    return clean(helper.body)


def _stored(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _kernel_arguments(body: list[ast.stmt], kernel: dict[str, str], module: str) -> set[str]:
    """The names the statements that call the kernel read (its arguments, `*args` included);
    every name when the kernel call is not among them (a helper calls it: no narrowing)."""
    names: set[str] = set()
    found = False
    for node in body:
        on_module = bool(module) and any(
            isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == module
            for n in ast.walk(node)
        )
        if on_module or _calls_kernel(node, kernel):
            found = True
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if not found:
        return {n.id for node in body for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names


def _helper_call(node: ast.stmt, functions: dict[str, ast.FunctionDef]) -> ast.Call | None:
    value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in functions:
        return value
    return None


def _seed_of(helper: ast.FunctionDef, call: ast.Call) -> ast.expr | None:
    """The seed `set_seed(42)` gives torch.manual_seed: the argument of the helper's parameter.
    None for a helper that returns a value (it does more than seed)."""
    if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(helper)):
        return None
    params = [a.arg for a in helper.args.args]
    for child in ast.walk(helper):
        if is_call_with_one_argument(child, "torch.manual_seed"):
            seed = child.args[0]
            if isinstance(seed, ast.Name) and seed.id in params:
                position = params.index(seed.id)
                keyword = next((k.value for k in call.keywords if k.arg == seed.id), None)
                if keyword is not None:
                    return keyword
                if position < len(call.args):
                    return call.args[position]
                defaults = dict(zip(params[len(params) - len(helper.args.defaults) :], helper.args.defaults))
                return defaults.get(seed.id)
            return seed if isinstance(seed, ast.Constant) else None
    return None


def _manual_seed(seed: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "manual_seed", ast.Load()), [seed], [])


def _draws(helper: ast.AST) -> bool:
    return any(
        isinstance(child, ast.Call)
        and isinstance(child.func, ast.Attribute)
        and isinstance(child.func.value, ast.Name)
        and child.func.value.id == "torch"
        and child.func.attr.removesuffix("_like") in _DRAWS
        for child in ast.walk(helper)
    )


def _calls_kernel(node: ast.AST, kernel: dict[str, str]) -> bool:
    return any(
        isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in kernel
        for child in ast.walk(node)
    )


def _inline_call(
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
    renamer = _Renamer(names.renames)
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


class _Renamer(ast.NodeTransformer):
    def __init__(self, renames: dict[str, ast.expr]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        replacement = self.renames.get(node.id)
        if replacement is None:
            return node
        if isinstance(replacement, ast.Name):
            return ast.copy_location(ast.Name(replacement.id, node.ctx), node)
        return ast.copy_location(copy.deepcopy(replacement), node)


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
        elements = [_Renamer({name: element}).visit(copy.deepcopy(comprehension.elt)) for element in literal.elts]
        return ast.copy_location(ast.Tuple(elements, ast.Load()), node)


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


def unroll_output_loops(body: list[ast.stmt], functions: dict[str, ast.FunctionDef], module: str) -> list[ast.stmt]:
    """`results = mod.fn(...)`, `refs = reference(...)` and `for idx, (r, ref) in
    enumerate(zip(results, refs)): ...compare r with ref...`, where every `return` of the
    runner's `reference` is a tuple of N values none of which is None: the kernel's N outputs
    unpacked (`results_0, results_1 = mod.fn(...)`) and the loop's body once per output, its
    names suffixed (`r_0 = results_0`, `ref_0 = refs[0]`), `if ref is None: continue` dropped."""
    result = list(body)
    for position, node in enumerate(result):
        if not isinstance(node, ast.For):
            continue
        parts = _zip_loop(node)
        if parts is None:
            continue
        index, output_name, reference_name, outputs, references = parts
        call_position = _assigned_at(result[:position], outputs)
        reference_position = _assigned_at(result[:position], references)
        if call_position is None or reference_position is None:
            continue
        call, made = result[call_position], result[reference_position]
        if not (_calls_on(call, module) and isinstance(made, ast.Assign) and isinstance(made.value, ast.Call)):
            continue
        maker = made.value.func.id if isinstance(made.value.func, ast.Name) else ""
        count = _tuple_returns(functions.get(maker))
        if count is None:
            continue
        loop_body = [s for s in node.body if not _skips_none(s, reference_name)]
        if any(isinstance(n, (ast.Continue, ast.Break)) for s in loop_body for n in ast.walk(s)):
            continue
        names = [f"{outputs}_{k}" for k in range(count)]
        unpacked = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        called = call.value  # type: ignore[attr-defined]
        result[call_position] = ast.copy_location(ast.Assign([unpacked], called), call)
        assigned = {
            n.id for s in loop_body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        unrolled: list[ast.stmt] = []
        for k in range(count):
            renames: dict[str, ast.expr] = {
                name: ast.Name(f"{name}_{k}", ast.Load()) for name in assigned | {output_name, reference_name}
            }
            if index:
                renames[index] = ast.Constant(k)
            unrolled.append(
                ast.copy_location(
                    ast.Assign([ast.Name(f"{output_name}_{k}", ast.Store())], ast.Name(names[k], ast.Load())), node
                )
            )
            item = ast.Subscript(ast.Name(references, ast.Load()), ast.Constant(k), ast.Load())
            unrolled.append(ast.copy_location(ast.Assign([ast.Name(f"{reference_name}_{k}", ast.Store())], item), node))
            unrolled += [_Renamer(renames).visit(copy.deepcopy(s)) for s in loop_body]
        result[position : position + 1] = [ast.fix_missing_locations(s) for s in unrolled]
        return unroll_output_loops(result, functions, module)
    return result


def _zip_loop(node: ast.For) -> tuple[str | None, str, str, str, str] | None:
    """(index, output, reference, outputs, references) of `for [idx,] (r, ref) in [enumerate(]zip(results, refs)[)]`."""
    iterated, target, index = node.iter, node.target, None
    if is_call_with_one_argument(iterated, "enumerate"):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
            return None
        iterated, index, target = iterated.args[0], target.elts[0].id, target.elts[1]
    if not (
        isinstance(iterated, ast.Call)
        and getattr(iterated.func, "id", "") == "zip"
        and len(iterated.args) == 2
        and all(isinstance(a, ast.Name) for a in iterated.args)
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
    ):
        return None
    output, reference = (e.id for e in target.elts)  # type: ignore[attr-defined]
    outputs, references = (a.id for a in iterated.args)  # type: ignore[attr-defined]
    return index, output, reference, outputs, references


def _assigned_at(body: list[ast.stmt], name: str) -> int | None:
    for position in range(len(body) - 1, -1, -1):
        node = body[position]
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            return position
    return None


def _calls_on(node: ast.stmt, module: str) -> bool:
    value = getattr(node, "value", None)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == module
    )


def _tuple_returns(function: ast.FunctionDef | None) -> int | None:
    """N when every `return` of `function` (not of a function inside it) is a tuple of N values,
    none of them the constant None."""
    if function is None:
        return None
    returns: list[ast.Return] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        pending += list(ast.iter_child_nodes(node))
    sizes = {
        len(r.value.elts)
        for r in returns
        if isinstance(r.value, ast.Tuple)
        and not any(isinstance(e, ast.Constant) and e.value is None for e in r.value.elts)
    }
    if len(sizes) != 1 or not all(isinstance(r.value, ast.Tuple) for r in returns):
        return None
    return sizes.pop()


def _skips_none(node: ast.stmt, name: str) -> bool:
    """`if ref is None: continue`."""
    return (
        isinstance(node, ast.If)
        and ast.unparse(node.test) == f"{name} is None"
        and len(node.body) == 1
        and isinstance(node.body[0], ast.Continue)
        and not node.orelse
    )


def fold_fill_loops(body: list[ast.stmt]) -> list[ast.stmt]:
    """An integer `t = torch.zeros(n + 1, ...)` that the next statement fills as a running sum,
    `for r in range(n): t[r + 1] = t[r] + c`, or `t = torch.zeros(n, ...)` filled as `for j in
    range(n): t[j] = j * c` (`c * j`, `j`): `t = torch.arange(n [+ 1], ...) * c`, the same values
    (k * c at k; an integer c: a fractional one, truncated at each store, is refused where the
    draw is read). `c` reads neither the loop's name nor t, and nothing after reads the loop's name."""
    result: list[ast.stmt] = []
    sums: dict[str, tuple[ast.expr, ast.expr]] = {}  # running sums folded above: name -> (n, c), s[r] = r * c
    position = 0
    while position < len(body):
        node = body[position]
        following = body[position + 1] if position + 1 < len(body) else None
        rest = body[position + 2 :]
        folded = None
        if following is not None:
            folded = (
                _folded_rows(node, following, rest, sums)
                or _folded_pages(node, following, rest, result)
                or _folded_fill(node, following, rest)
            )
        if folded is not None:
            for name in _written(node):
                sums.pop(name, None)
            summed = _running_sum(node, following)  # type: ignore[arg-type]
            if summed is not None:
                sums[summed[0]] = summed[1:]
            result.append(folded)
            position += 2
            continue
        for name in _written(node):
            sums.pop(name, None)
        result.append(node)
        position += 1
    return result


def _running_sum(node: ast.stmt, loop: ast.stmt) -> tuple[str, ast.expr, ast.expr] | None:
    """(t, n, c) of `t = torch.zeros(n + 1, ...)` and `for r in range(n): t[r + 1] = t[r] + c`."""
    zeros = _integer_zeros(node)
    ranged = _range_loop(loop)
    if zeros is None or ranged is None or len(zeros.args) != 1:
        return None
    name = node.targets[0].id  # type: ignore[attr-defined]
    index, count, fill = ranged.target.id, ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    read = ast.Subscript(ast.Name(name, ast.Load()), ast.Name(index, ast.Load()), ast.Load())
    if not (
        _same(zeros.args[0], _plus_one(count))
        and isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and _same(
            fill.targets[0],
            ast.Subscript(ast.Name(name, ast.Load()), _plus_one(ast.Name(index, ast.Load())), ast.Store()),
        )
        and isinstance(fill.value, ast.BinOp)
        and isinstance(fill.value.op, ast.Add)
        and _same(fill.value.left, read)
    ):
        return None
    return name, count, fill.value.right


def _folded_grid(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt]) -> ast.stmt | None:
    """`t = torch.zeros(a, b, dtype=<int>)` then `for i in range(a): for j in range(b): t[i, j] =
    i * b + j` (`b * i + j`, `j + i * b`): every element its row-major index,
    `t = torch.arange(a * b, ...).reshape(a, b)`. Nothing after reads i or j."""
    zeros = _integer_zeros(node)
    if zeros is None or len(zeros.args) != 2 or any(isinstance(a, ast.Starred) for a in zeros.args):
        return None
    name, (rows, cols) = node.targets[0].id, zeros.args  # type: ignore[attr-defined]
    outer = _range_loop(loop, rows)
    inner = _range_loop(outer.body[0], cols) if outer is not None else None
    if outer is None or inner is None:
        return None
    i, j, fill = outer.target.id, inner.target.id, inner.body[0]  # type: ignore[attr-defined]
    index = ast.Tuple([ast.Name(i, ast.Load()), ast.Name(j, ast.Load())], ast.Load())
    if not (
        isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and isinstance(fill.targets[0], ast.Subscript)
        and isinstance(fill.targets[0].value, ast.Name)
        and fill.targets[0].value.id == name
        and _same(fill.targets[0].slice, index)
    ):
        return None
    shown = ast.unparse(fill.value).replace(" ", "")
    b = ast.unparse(cols).replace(" ", "")
    within = shown == j  # t[i, j] = j: each row 0 .. b-1, the arange of period b
    if not within and shown not in (f"{i}*{b}+{j}", f"{b}*{i}+{j}", f"{j}+{i}*{b}", f"{j}+{b}*{i}", f"{i}*({b})+{j}"):
        return None
    if _read_before_rebound(i, rest) or _read_before_rebound(j, rest) or i == j:
        return None
    size = ast.BinOp(copy.deepcopy(rows), ast.Mult(), copy.deepcopy(cols))
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [size],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value: ast.expr = ast.Call(
        ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(rows), copy.deepcopy(cols)], []
    )
    if within:
        value = ast.BinOp(value, ast.Mod(), copy.deepcopy(cols))
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def _folded_rows(
    node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt], sums: dict[str, tuple[ast.expr, ast.expr]]
) -> ast.stmt | None:
    """`t = torch.zeros(size, dtype=<int>)` then `for r in range(n): start = <r * q>; for k in
    range(q): t[start + k] = k`: each of n rows of q elements 0 .. q-1, `t =
    torch.arange(n * q, ...).reshape(size) % q` (the interpreter checks that size is n * q).
    `<r * q>` is `r * q`, `q * r`, or `s[r].item()` (`int(...)` of it) for an `s` folded above
    from `for r in range(n): s[r + 1] = s[r] + q` (s[r] = r * q). Nothing after reads r, start or k."""
    zeros = _integer_zeros(node)
    if zeros is None or len(zeros.args) != 1 or isinstance(zeros.args[0], (ast.Tuple, ast.List, ast.Starred)):
        return None
    name, size = node.targets[0].id, zeros.args[0]  # type: ignore[attr-defined]
    rows = _range_loop(loop, statements=2)
    if rows is None:
        return None
    r, count, (first, inner) = rows.target.id, rows.iter.args[0], rows.body  # type: ignore[attr-defined]
    ranged = _range_loop(inner)
    if not (
        ranged is not None
        and isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
    ):
        return None
    start, k = first.targets[0].id, ranged.target.id  # type: ignore[attr-defined]
    q, fill = ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    if len({r, start, k, name}) != 4 or {n.id for n in ast.walk(q) if isinstance(n, ast.Name)} & {r, start, k, name}:
        return None
    target = ast.Subscript(
        ast.Name(name, ast.Load()), _plus(ast.Name(start, ast.Load()), ast.Name(k, ast.Load())), ast.Store()
    )
    if not (isinstance(fill, ast.Assign) and len(fill.targets) == 1 and _same(fill.targets[0], target)):
        return None
    if not (isinstance(fill.value, ast.Name) and fill.value.id == k):
        return None
    if not _row_start(first.value, r, count, q, sums):
        return None
    if any(_read_before_rebound(n, rest) for n in (r, start, k)):
        return None
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [ast.BinOp(copy.deepcopy(count), ast.Mult(), copy.deepcopy(q))],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value = ast.BinOp(
        ast.Call(ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(size)], []), ast.Mod(), copy.deepcopy(q)
    )
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def _folded_pages(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt], before: list[ast.stmt]) -> ast.stmt | None:
    """`t = torch.zeros(a, c, dtype=<int>)`, `c = p * d` assigned above, then `for i in range(a):
    for j in range(m): t[i, j] = i * p + j // d` (the value maybe bound to a name first): each row
    the pages of its m positions, d to a page, which is `torch.arange(a * m, ...).reshape(a, c) //
    d` where m == c (the interpreter checks that reshape; a row's elements past m would stay 0).
    Nothing after reads i, j or the value's name."""
    zeros = _integer_zeros(node)
    if zeros is None or len(zeros.args) != 2 or any(isinstance(a, ast.Starred) for a in zeros.args):
        return None
    name, (rows, cols) = node.targets[0].id, zeros.args  # type: ignore[attr-defined]
    outer = _range_loop(loop, rows)
    inner = None if outer is None else _range_loop(outer.body[0]) or _range_loop(outer.body[0], statements=2)
    if outer is None or inner is None or not isinstance(cols, ast.Name):
        return None
    i, j, count, body = outer.target.id, inner.target.id, inner.iter.args[0], inner.body  # type: ignore[attr-defined]
    temp = ""
    fill, value = body[-1], getattr(body[-1], "value", None)
    if len(body) == 2:
        first = body[0]
        if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
            return None
        temp, value = first.targets[0].id, first.value
        if not (isinstance(fill, ast.Assign) and isinstance(fill.value, ast.Name) and fill.value.id == temp):
            return None
    index = ast.Tuple([ast.Name(i, ast.Load()), ast.Name(j, ast.Load())], ast.Load())
    if not (
        isinstance(fill, ast.Assign)
        and len(fill.targets) == 1
        and _same(fill.targets[0], ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store()))
        and isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and isinstance(value.left, ast.BinOp)
        and isinstance(value.left.op, ast.Mult)
        and isinstance(value.right, ast.BinOp)
        and isinstance(value.right.op, ast.FloorDiv)
        and _same(value.right.left, ast.Name(j, ast.Load()))
    ):
        return None
    row, divisor = ast.Name(i, ast.Load()), value.right.right
    pages = (
        value.left.right if _same(value.left.left, row) else value.left.left if _same(value.left.right, row) else None
    )
    loop_names = {i, j, name, temp}
    if pages is None or {n.id for e in (pages, divisor) for n in ast.walk(e) if isinstance(n, ast.Name)} & loop_names:
        return None
    if not _product_above(cols.id, pages, divisor, before):
        return None
    if any(_read_before_rebound(n, rest) for n in (i, j, temp) if n):
        return None
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [ast.BinOp(copy.deepcopy(rows), ast.Mult(), copy.deepcopy(count))],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    shaped = ast.Call(ast.Attribute(arange, "reshape", ast.Load()), [copy.deepcopy(rows), copy.deepcopy(cols)], [])
    folded = ast.Assign([ast.Name(name, ast.Store())], ast.BinOp(shaped, ast.FloorDiv(), copy.deepcopy(divisor)))
    return ast.fix_missing_locations(ast.copy_location(folded, node))


def _product_above(name: str, a: ast.expr, b: ast.expr, before: list[ast.stmt]) -> bool:
    """Whether the last assignment of `name` in `before` is `name = a * b` (or `b * a`) and no
    statement after it writes `name` or a name `a` or `b` reads."""
    reads = {n.id for e in (a, b) for n in ast.walk(e) if isinstance(n, ast.Name)} | {name}
    for position in range(len(before) - 1, -1, -1):
        statement = before[position]
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
        ):
            product = statement.value
            return (
                isinstance(product, ast.BinOp)
                and isinstance(product.op, ast.Mult)
                and (
                    (_same(product.left, a) and _same(product.right, b))
                    or (_same(product.left, b) and _same(product.right, a))
                )
            )
        if _written(statement) & reads:
            return False
    return False


def _row_start(
    value: ast.expr, r: str, count: ast.expr, q: ast.expr, sums: dict[str, tuple[ast.expr, ast.expr]]
) -> bool:
    """Whether `value` is r * q for every r in range(count): `r * q`, `q * r`, or `s[r].item()`
    (also inside `int(...)`) of a running sum `s` folded with the same count and step."""
    row = ast.Name(r, ast.Load())
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return (_same(value.left, row) and _same(value.right, q)) or (_same(value.right, row) and _same(value.left, q))
    if is_call_with_one_argument(value, "int") and not value.keywords:
        value = value.args[0]
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "item"
        and not value.args
        and not value.keywords
        and isinstance(value.func.value, ast.Subscript)
        and isinstance(value.func.value.value, ast.Name)
        and _same(value.func.value.slice, row)
    ):
        return False
    folded = sums.get(value.func.value.value.id)
    return folded is not None and _same(folded[0], count) and _same(folded[1], q)


def _plus(a: ast.expr, b: ast.expr) -> ast.expr:
    return ast.BinOp(a, ast.Add(), b)


def _written(node: ast.stmt) -> set[str]:
    """The names `node` binds or stores into (`x = ...`, `x[i] = ...`, `x += ...`, a loop's target)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name):
            names.add(sub.value.id)
    return names


def _integer_zeros(node: ast.stmt) -> ast.Call | None:
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


def _range_loop(node: ast.stmt, count: ast.expr | None = None, statements: int = 1) -> ast.For | None:
    """`node` when it is `for <name> in range(count):` with `statements` statements and no else."""
    if (
        isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and not node.orelse
        and len(node.body) == statements
        and is_call_with_one_argument(node.iter, "range")
        and not node.iter.keywords
        and (count is None or _same(node.iter.args[0], count))
    ):
        return node
    return None


def _folded_fill(node: ast.stmt, loop: ast.stmt, rest: list[ast.stmt]) -> ast.stmt | None:
    grid = _folded_grid(node, loop, rest)
    if grid is not None:
        return grid
    zeros = _integer_zeros(node)
    if zeros is None or len(zeros.args) != 1 or isinstance(zeros.args[0], (ast.Tuple, ast.List, ast.Starred)):
        return None
    name, size = node.targets[0].id, zeros.args[0]  # type: ignore[attr-defined]
    ranged = _range_loop(loop)
    if ranged is None:
        return None
    index, count, fill = ranged.target.id, ranged.iter.args[0], ranged.body[0]  # type: ignore[attr-defined]
    if not (isinstance(fill, ast.Assign) and len(fill.targets) == 1 and isinstance(fill.targets[0], ast.Subscript)):
        return None
    target, value = fill.targets[0], fill.value
    if not (isinstance(target.value, ast.Name) and target.value.id == name):
        return None
    step: ast.expr | None = None
    if _same(target.slice, _plus_one(ast.Name(index, ast.Load()))) and _same(size, _plus_one(count)):
        # t[r + 1] = t[r] + c
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            read = ast.Subscript(ast.Name(name, ast.Load()), ast.Name(index, ast.Load()), ast.Load())
            if _same(value.left, read):
                step = value.right
    elif _same(target.slice, ast.Name(index, ast.Load())) and _same(size, count):
        # t[j] = j * c, c * j or j
        if isinstance(value, ast.Name) and value.id == index:
            step = ast.Constant(1)
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            if isinstance(value.left, ast.Name) and value.left.id == index:
                step = value.right
            elif isinstance(value.right, ast.Name) and value.right.id == index:
                step = value.left
    if step is None or {n.id for n in ast.walk(step) if isinstance(n, ast.Name)} & {name, index}:
        return None
    if _read_before_rebound(index, rest):
        return None  # the loop's name, bound after the loop, is read later
    arange = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "arange", ast.Load()),
        [copy.deepcopy(size)],
        [copy.deepcopy(k) for k in zeros.keywords],
    )
    value = (
        arange
        if isinstance(step, ast.Constant) and step.value == 1
        else ast.BinOp(arange, ast.Mult(), copy.deepcopy(step))
    )
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node))


def _read_before_rebound(name: str, statements: list[ast.stmt]) -> bool:
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
            if reads_head or _read_before_rebound(name, statement.body):
                return True
            continue
        reads = head if head is not None else statement
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(reads)):
            return True
        if head is not None:
            return False
    return False


def _plus_one(node: ast.expr) -> ast.expr:
    return ast.BinOp(copy.deepcopy(node), ast.Add(), ast.Constant(1))


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, annotate_fields=False) == ast.dump(b, annotate_fields=False)
