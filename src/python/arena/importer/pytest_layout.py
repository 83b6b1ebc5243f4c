"""The correctness test of an AgentKernelArena pytest file (their rocmbench tasks): kernel, tests
and benchmark in one file, read from its `ast` and brought to the task runner's shape
(arena.importer.correctness.TestLoop).

The layout read: config.yaml starts `pytest ... <file>.py -k "not test_performance and not ..."`
and names <file>.py as the one source file. Its test functions that `-k` keeps and that compare
(`assert_close`, `torch.allclose`, ...) are the correctness tests; the importer reads one. Its
cases are the product of its `@pytest.mark.parametrize` lists (evaluated from the file's
top-level constants, as arena.importer.harness evaluates a harness's); each case binds the
parameter names; parameters with defaults keep them, `request` (pytest's fixture) is left out
with every statement that reads it (they record results for AKA's own report). The kernel is the
file's function the test calls that launches a Triton kernel (`y = softmax(x)`); a test that
launches the `@triton.jit` kernel itself (`add_kernel[grid](...)`) has that launch made into a
function beside the file (arena.importer.launch). A test without parametrize is one case. Helpers
that seed or draw inputs are inlined as in a harness.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from arena.importer.autograd_apply import refuse_gradients
from arena.importer.config import TaskConfig, command_words
from arena.importer.correctness import TestLoop, read_loop_body
from arena.importer.harness import Constants, assignment, is_literal_value
from arena.importer.helper_inlining import inline_helpers
from arena.importer.launch import launched, wrap_launch
from arena.importer.outcome import CasesByCode, LaunchNotWritten, LayoutNotRead
from arena.importer.returned_calls import inline_returned_calls, refuse_own_comparisons
from arena.importer.rewrites import call_on_module, flatten
from arena.importer.values import CannotRead, DType

FIXTURES = frozenset(("request",))  # pytest fixtures a test may take that hold no case value
_COMPARISONS = frozenset(("assert_close", "allclose", "equal", "assert_allclose"))


def pytest_file(config: TaskConfig) -> tuple[str, list[str]] | None:
    """The test file a config runs as `pytest ... <file>.py -k "..."`, and the names `-k` leaves
    out (`not a and not b`); None for another layout. NotImportable for a `-k` not of that form."""
    words = command_words(config)
    if words is None:
        return None
    if not words or words[0] != "pytest":
        return None
    files = [word for word in words if word.endswith(".py")]
    if len(files) != 1:
        return None
    excluded: list[str] = []
    if "-k" in words and words.index("-k") + 1 < len(words):
        expression = words[words.index("-k") + 1].split()
        # "not a and not b and not c": pairs of `not NAME` joined by `and`
        pairs = [expression[i : i + 3] for i in range(0, len(expression), 3)]
        for pair in pairs:
            if len(pair) < 2 or pair[0] != "not" or (len(pair) == 3 and pair[2] != "and"):
                raise LayoutNotRead(f"pytest -k {' '.join(expression)!r} is not `not a and not b ...`")
            excluded.append(pair[1])
    return files[0], excluded


def read_pytest_loop(tree: ast.Module, shown: str, excluded: list[str]) -> TestLoop:
    """The test loop of the pytest file `tree` (its own kernel file), as a TestLoop."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    jit = {name for name, f in functions.items() if _is_jit(f)}
    tests = [
        function
        for name, function in functions.items()
        if name.startswith("test_")
        and not any(word in name for word in excluded)
        and (_compares(function) or launched(function) & jit)
    ]
    if len(tests) != 1:
        names = ", ".join(t.name for t in tests) or "none"
        raise LayoutNotRead(f"{shown} has {len(tests)} correctness tests ({names}); the importer reads one")
    test = tests[0]
    refuse_gradients(flatten(test.body), f"`{test.name}`")
    launches = sorted(launched(test) & jit)
    kernel = {
        name: name
        for name in _called(test)
        if name in functions and not name.startswith("test_") and _launches_any(functions[name], functions, jit)
    }
    if len(launches) > 1 or (launches and kernel):
        raise LaunchNotWritten(f"`{test.name}` launches {', '.join(launches)} and calls {', '.join(kernel) or 'none'}")
    if not kernel and not launches:
        raise LayoutNotRead(f"`{test.name}` calls no function of {shown} that launches a Triton kernel")
    constants = Constants(tree)
    parameters, shapes = _cases(test, constants)
    defaults = _defaults(test, constants, set(parameters))
    target = ast.copy_location(ast.Tuple([ast.Name(n, ast.Store()) for n in parameters], ast.Store()), test)
    module = "kernel_module"
    while any(isinstance(n, ast.Name) and n.id == module for n in ast.walk(tree)):
        module = f"_{module}"
    body = inline_returned_calls(_without_request(flatten(test.body), tree), functions)
    refuse_own_comparisons(body, functions, shown)
    adapter = None
    if launches:  # the test's launch made into a function (arena.importer.launch)
        given = set(parameters) | set(defaults)
        body, adapter = wrap_launch(body, launches[0], module, shown, tree, given, test.name)
    helpers = {k: v for k, v in functions.items() if k not in kernel}
    body = inline_helpers(body, helpers, kernel, shown, 0, module if adapter else "")
    body = [call_on_module(node, kernel, module) for node in body]
    setup = [_default(name, value, test) for name, value in defaults.items() if _is_default(value)]
    seed, statements, call, comparisons = read_loop_body(body, module, shown)
    return TestLoop(
        tuple(shapes), None, target, tuple(setup), module, seed, tuple(statements), call, comparisons, adapter
    )


def _compares(function: ast.FunctionDef) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _COMPARISONS:
                return True
    return False


def _is_jit(function: ast.FunctionDef) -> bool:
    return any(
        any(word in ast.unparse(d) for word in ("triton.jit", "triton.autotune", "triton.heuristics"))
        for d in function.decorator_list
    )


def _called(node: ast.AST) -> list[str]:
    seen: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id not in seen:
            seen.append(child.func.id)
    return seen


def _launches_any(
    function: ast.FunctionDef, functions: dict[str, ast.FunctionDef], jit: set[str], depth: int = 0
) -> bool:
    if _is_jit(function) or depth > 3:
        return False
    aliases = {  # `matmult_kernel = triton_dot_matmul_kernel`, then `matmult_kernel[grid](...)`
        target.id: node.value.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    if {aliases.get(name, name) for name in launched(function)} & jit:
        return True
    return any(
        _launches_any(functions[name], functions, jit, depth + 1)
        for name in _called(function)
        if name in functions and name != function.name
    )


def _cases(test: ast.FunctionDef, constants: Constants) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The parameter names of the test's parametrize decorators and the product of their values."""
    names: list[str] = []
    lists: list[list[tuple[Any, ...]]] = []
    for decorator in reversed(test.decorator_list):  # the innermost first, as pytest applies them
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("mark.parametrize")):
            if "pytest" in ast.unparse(decorator) and not _runs_on_arena(decorator):
                raise LayoutNotRead(f"`{test.name}` is marked `{ast.unparse(decorator)[:60]}`")
            continue
        if len(decorator.args) < 2:
            raise LayoutNotRead(f"`{test.name}`: parametrize without its names and values")
        try:
            given = constants.evaluate(decorator.args[0], {})
            values = constants.evaluate(decorator.args[1], {})
        except (CannotRead, KeyError, IndexError, TypeError, ValueError) as error:
            raise CasesByCode(f"`{test.name}`'s parametrize values cannot be read: {error}") from None
        these = [n.strip() for n in given.split(",")] if isinstance(given, str) else list(given)
        if not these or not all(isinstance(n, str) and n.isidentifier() for n in these):
            raise LayoutNotRead(f"`{test.name}`: parametrize names {given!r}")
        rows = [(value,) if len(these) == 1 else tuple(value) for value in values]
        if not rows or any(len(row) != len(these) for row in rows):
            raise LayoutNotRead(f"`{test.name}`: parametrize values that are not one per name")
        names += these
        lists.append(rows)
    if not names:  # one case, with what the test fixes itself
        return [], [()]
    shapes = [sum(combination, ()) for combination in itertools.product(*lists)]
    return names, shapes


def _runs_on_arena(decorator: ast.expr) -> bool:
    """A mark that leaves the test running where arena runs it: `interpreter` (it may also run
    under Triton's interpreter), a skip below compute capability 9 (arena's GPUs, sm_90 and
    gfx942, are 9.x)."""
    shown = ast.unparse(decorator)
    if shown.endswith("mark.interpreter"):
        return True
    if not (isinstance(decorator, ast.Call) and shown.startswith("pytest.mark.skipif(") and decorator.args):
        return False
    condition = decorator.args[0]
    return (
        isinstance(condition, ast.Compare)
        and ast.unparse(condition.left) == "torch.cuda.get_device_capability()[0]"
        and len(condition.ops) == 1
        and isinstance(condition.ops[0], ast.Lt)
        and isinstance(condition.comparators[0], ast.Constant)
        and condition.comparators[0].value in (8, 9)
    )


def _defaults(test: ast.FunctionDef, constants: Constants, parametrized: set[str]) -> dict[str, Any]:
    spec = test.args
    positional = [a.arg for a in spec.args]
    defaults = dict(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults))
    values: dict[str, Any] = {}
    for name in positional:
        if name in parametrized or name in FIXTURES:
            continue
        if name not in defaults:
            raise LayoutNotRead(f"`{test.name}` takes {name!r}, a fixture the importer does not read")
        try:
            values[name] = constants.evaluate(defaults[name], {})
        except (CannotRead, KeyError, IndexError, TypeError, ValueError):
            raise CasesByCode(
                f"`{test.name}`'s default {name}=`{ast.unparse(defaults[name])}` cannot be read"
            ) from None
    return values


def _is_default(value: Any) -> bool:
    return is_literal_value(value) or isinstance(value, DType)


def _default(name: str, value: Any, test: ast.FunctionDef) -> ast.stmt:
    """`name = value` for a parameter's default: a literal, or a dtype (`dtype=torch.float16`)."""
    if not isinstance(value, DType):
        return assignment(name, value, test)
    dtype = ast.Attribute(ast.Name("torch", ast.Load()), value.name, ast.Load())
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], dtype), test))


def _without_request(body: list[ast.stmt], tree: ast.Module) -> list[ast.stmt]:
    """The body less the statements that read `request` (and the names they bind), and those that
    store into a top-level object (`result_gold[key] = ...`: AKA's record of the outputs)."""
    top = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    tainted = set(FIXTURES)
    kept: list[ast.stmt] = []
    for node in body:
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        stored_into = {_base(t) for t in getattr(node, "targets", []) if isinstance(t, (ast.Subscript, ast.Attribute))}
        if read & tainted or stored_into & top:
            tainted |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _printing(node.value):
            continue
        kept.append(node)
    return kept


def _printing(call: ast.Call) -> bool:
    return ast.unparse(call.func) == "torch.set_printoptions"


def _base(node: ast.expr) -> str:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""
