"""Which helpers of the test's file a loop's statements call are inlined (one that draws the
inputs or calls the kernel, before the kernel is called), a seeding helper as its
torch.manual_seed, and a second call of an inlined helper that only moves what it drew as those
moves. How one call is inlined: arena.importer.inlined_call."""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.inlined_call import inline_call
from arena.importer.rewrites import flatten
from arena.importer.syntax import same

MAX_INLINE_DEPTH = 3
_DRAWS = frozenset(("randn", "rand", "randint", "randperm", "zeros", "ones", "full", "empty", "arange", "tensor"))


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
                inlined = inline_call(node, call, helper, harness, outer)
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
    differing = [(param, value) for param, old, value in pairs if not same(old, value)]
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
