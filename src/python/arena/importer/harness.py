"""The correctness test of an AgentKernelArena `test_kernel_harness.py` (their geak_eval tasks),
read from its `ast` and brought to the task runner's shape (arena.importer.correctness.TestLoop).

The layout read: config.yaml starts `python3 test_kernel_harness.py --correctness`; the harness
imports the kernel function from the kernel file (`from kernel import fn`), lists its cases at
its top level (`ALL_CONFIGS = [...]`: tuples, or dicts built by a comprehension) and has a
`run_correctness(...)`, which `main()` calls for `--correctness`, looping over those cases
(`for idx in indices: cfg = ALL_CONFIGS[idx]`, or over the list itself). Each pass draws the
inputs (often in a helper: `x, w = build_inputs(cfg)`), calls the kernel function, computes a
reference and compares.

What is brought to the runner's shape, each exactly equivalent to the harness:
- the case list is evaluated from the harness's (and the kernel file's) top-level constants: a
  comprehension over literal lists, slices, `list(range(len(...)))`, a list literal that
  top-level loops then fill (`for a in A: for b in B: CONFIGS.append((a, b))`: the same as
  `[(a, b) for a in A for b in B]`), a call of a function of no parameters whose body only binds
  names and returns (`get_target_shapes()`, rocmbench's parametrize): what it returns; a list
  built by any other function is not read;
- run_correctness's parameters (`shapes`, `atol=...`) get the values main() passes for
  `--correctness` (`args.atol`: the argparse default), else their own defaults;
- a dict case (`cfg`) becomes one name per key: `cfg["M"]` is `M`, `f(**cfg)` is `f(M=M, ...)`;
- a harness helper called before the kernel that draws the inputs or calls the kernel is
  inlined: its parameters bound to the arguments, its body, its return bound to the names the
  loop gives it (`return cmp` of a helper that compares: that comparison); one that seeds torch
  (`set_seed(42)`) is that seed;
- a `try:` around the check is its body (the check passes when the body runs), printing,
  `del` and cache clearing are left out;
- the kernel function, called by its name, is called on the kernel module (`kernel.fn(...)`).
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable, Iterator

from arena.importer.calls import is_call_with_one_argument
from arena.importer.config import TaskConfig, command_words
from arena.importer.correctness import TestLoop, read_loop_body, setup_and_loop
from arena.importer.helper_inlining import inline_helpers
from arena.importer.interpreter import Interpreter, Scope
from arena.importer.outcome import CasesByCode, LayoutNotRead
from arena.importer.rewrites import call_on_module, flatten
from arena.importer.values import CannotRead, DType

HARNESS_FLAG = "--correctness"
TEST_FUNCTION = "run_correctness"


def harness_path(config: TaskConfig) -> str | None:
    """The harness a config starts as `python3 <harness>.py --correctness`; None for another layout."""
    words = command_words(config)
    if words is None:
        return None
    if len(words) == 3 and words[0] in ("python", "python3") and words[1].endswith(".py") and words[2] == HARNESS_FLAG:
        return words[1]
    return None


def read_harness_loop(tree: ast.Module, harness: str, kernel_tree: ast.Module) -> TestLoop:
    """The test loop of the harness `tree` (shown as `harness` in reasons), as a TestLoop whose
    kernel module is the kernel file `kernel_tree`."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    test = functions.get(_test_function(tree, functions) or TEST_FUNCTION)
    if test is None:
        raise LayoutNotRead(f"{harness} defines no {TEST_FUNCTION}() and main() calls none for {HARNESS_FLAG}")
    constants = Constants(tree, kernel_tree)
    kernel_names, module_name = _kernel_functions(tree, test, kernel_tree, harness)
    parameters = _parameters(test, tree, constants, harness)
    setup, loop = setup_and_loop(test.body)
    if loop is None:
        raise LayoutNotRead(f"{TEST_FUNCTION}() in {harness} has no loop over its cases")
    shapes, index, target, body = _cases(loop, parameters, constants, harness)
    body = inline_helpers(body, functions, kernel_names, harness, 0)
    shapes, target, body = _dict_cases(shapes, target, body, harness)
    body = [call_on_module(node, kernel_names, module_name) for node in body]
    bound = [assignment(name, value, test) for name, value in parameters.items() if is_literal_value(value)]
    seed, statements, call, comparisons = read_loop_body(body, module_name, harness)
    return TestLoop(
        tuple(shapes), index, target, tuple(bound + setup), module_name, seed, tuple(statements), call, comparisons
    )


class Constants:
    """The values of top-level names of the harness (and of the names it imports from the kernel
    file), evaluated on demand from literals, comprehensions, slices and a few builtins."""

    def __init__(self, tree: ast.Module, kernel_tree: ast.Module | None = None) -> None:
        self.nodes: dict[str, ast.expr | str] = {}
        self.imported: dict[str, str] = {}  # harness name -> the kernel file's name it imports
        self.kernel = Constants(kernel_tree) if kernel_tree is not None else None
        kernel = _top_assignments(kernel_tree) if kernel_tree is not None else {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                for alias in node.names:
                    if alias.name in kernel:
                        self.imported[alias.asname or alias.name] = alias.name
        self.nodes.update(_top_assignments(tree))
        grown, loops = _grown_lists(tree)
        self.nodes.update(grown)
        for node in tree.body:  # a list a top-level loop or call grows is not what its literal says
            if isinstance(node, (ast.For, ast.While, ast.If, ast.Expr, ast.AugAssign, ast.With)):
                for name in _mutated(node) - ({loops[id(node)]} if id(node) in loops else set()):
                    if name in self.nodes:
                        self.nodes[name] = f"{name} is built by top-level code (line {node.lineno})"
        self.values: dict[str, Any] = {}
        self.pending: set[str] = set()
        self.functions = _literal_functions(tree, set(self.nodes) | set(self.imported))

    def value(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        if name in self.imported and name not in self.nodes and self.kernel is not None:
            return self.kernel.value(self.imported[name])  # evaluated among the kernel file's names
        node = self.nodes.get(name)
        if node is None:
            raise CannotRead(f"{name!r} is not a top-level constant of the harness")
        if isinstance(node, str):
            raise CannotRead(node)
        if name in self.pending:
            raise CannotRead(f"{name!r} refers to itself")
        self.pending.add(name)
        try:
            self.values[name] = self.evaluate(node, {})
        finally:
            self.pending.discard(name)
        return self.values[name]

    def evaluate(self, node: ast.expr, local: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return local[node.id] if node.id in local else self.value(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            items: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items += list(self.evaluate(element.value, local))
                else:
                    items.append(self.evaluate(element, local))
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            if any(key is None for key in node.keys):
                raise CannotRead(f"a dict with ** (line {node.lineno})")
            pairs = [(k, v) for k, v in zip(node.keys, node.values) if k is not None]
            return {self.evaluate(k, local): self.evaluate(v, local) for k, v in pairs}
        if isinstance(node, ast.ListComp):
            return list(self._comprehension(node.elt, node.generators, dict(local)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.evaluate(node.operand, local)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
            left, right = self.evaluate(node.left, local), self.evaluate(node.right, local)
            operations = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.FloorDiv: "__floordiv__"}
            if isinstance(node.op, ast.Pow):
                return left**right
            result = getattr(left, operations[type(node.op)])(right)
            if result is NotImplemented:
                raise CannotRead(f"`{ast.unparse(node)[:60]}`")
            return result
        if isinstance(node, ast.Subscript):
            value = self.evaluate(node.value, local)
            if isinstance(node.slice, ast.Slice):
                parts = [None if p is None else self.evaluate(p, local) for p in (node.slice.lower, node.slice.upper)]
                return value[parts[0] : parts[1]]
            return value[self.evaluate(node.slice, local)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            builtin: dict[str, Callable[..., Any]] = {
                "list": list,
                "tuple": tuple,
                "range": range,
                "len": len,
                "int": int,
                "float": float,
            }
            if node.func.id in builtin and node.func.id not in self.nodes:
                result = builtin[node.func.id](*(self.evaluate(arg, local) for arg in node.args))
                return list(result) if isinstance(result, range) else result
            if node.func.id in self.functions and not node.args and node.func.id not in local:
                return self._returned(self.functions[node.func.id])
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
            value = Interpreter().evaluate(node, Scope({}, {"torch": _torch_module()}))
            if isinstance(value, DType):
                return value
        raise CannotRead(f"`{ast.unparse(node)[:60]}` (line {getattr(node, 'lineno', '?')})")

    def _returned(self, function: ast.FunctionDef) -> Any:
        """What a function of no parameters returns (`get_target_shapes()`), its body assignments
        of its own names (`x += [...]` too) and one `return` at the end (_literal_functions)."""
        if function.name in self.pending:
            raise CannotRead(f"{function.name}() calls itself")
        self.pending.add(function.name)
        local: dict[str, Any] = {}
        try:
            for statement in function.body:
                if isinstance(statement, ast.Assign):
                    _bind_static(statement.targets[0], self.evaluate(statement.value, local), local)
                elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                    addition = ast.BinOp(ast.Name(statement.target.id, ast.Load()), statement.op, statement.value)
                    local[statement.target.id] = self.evaluate(ast.copy_location(addition, statement), local)
                elif isinstance(statement, ast.Return) and statement.value is not None:
                    return self.evaluate(statement.value, local)
        finally:
            self.pending.discard(function.name)
        raise CannotRead(f"{function.name}() returns nothing")

    def _comprehension(
        self, element: ast.expr, generators: list[ast.comprehension], local: dict[str, Any]
    ) -> Iterator[Any]:
        if not generators:
            yield self.evaluate(element, local)
            return
        first, rest = generators[0], generators[1:]
        for item in self.evaluate(first.iter, local):
            inner = dict(local)
            _bind_static(first.target, item, inner)
            if all(self.evaluate(condition, inner) for condition in first.ifs):
                yield from self._comprehension(element, rest, inner)


def _torch_module() -> Any:
    from arena.importer.values import Module

    return Module("torch")


def _bind_static(target: ast.expr, value: Any, local: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        local[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = list(value)
        if len(values) != len(target.elts):
            raise CannotRead(f"unpacking {len(values)} values into {len(target.elts)} names")
        for element, item in zip(target.elts, values):
            _bind_static(element, item, local)
    else:
        raise CannotRead(f"a comprehension target `{ast.unparse(target)}`")


def _literal_functions(tree: ast.Module, constants: set[str]) -> dict[str, ast.FunctionDef]:
    """The top-level functions of no parameters and no decorators whose body (less a docstring) is
    assignments to names, `+=` of a name and one `return` at its end (`def get_target_shapes():
    return [(1, 8192, 28672), ...]`): a call of one is the value it returns, evaluated as the
    constants are. Not one whose name is bound again at the top level."""
    found: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list or node.name in constants:
            continue
        arguments = node.args
        if arguments.posonlyargs or arguments.args or arguments.vararg or arguments.kwonlyargs or arguments.kwarg:
            continue
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        last_returns = bool(body) and isinstance(body[-1], ast.Return) and body[-1].value is not None
        plain = all(
            (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], (ast.Name, ast.Tuple)))
            or (isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and isinstance(s.op, ast.Add))
            for s in body[:-1]
        )
        if last_returns and plain:
            found[node.name] = node
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
    return {name: node for name, node in found.items() if names.count(name) == 1}


def _top_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


def _grown_lists(tree: ast.Module) -> tuple[dict[str, ast.expr], dict[int, str]]:
    """Lists that a top-level `NAME = [...]` starts and top-level loops then fill, each loop only
    nested `for`s around one `NAME.append(e)`, with no other statement reading or writing NAME
    in between: the list literal plus, per loop, the comprehension that appends the same values
    in the same order (`[e for a in A for b in B]`). Returns those values by name, and the loops
    they take in (by id, to the name)."""
    started: dict[str, ast.expr] = {}
    grown: dict[str, ast.expr] = {}
    loops: dict[int, str] = {}
    for node in tree.body:
        appended = _appending_loop(node)
        filled = appended[0] if appended is not None and appended[0] in started else None
        for child in ast.walk(node):
            if child is node or (isinstance(child, ast.Name) and child.id == filled):
                continue
            if isinstance(child, ast.Name) and child.id in started:
                del started[child.id]  # read or written: later loops do not extend what was read
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store) and child.id in grown:
                del grown[child.id]  # assigned again: its last assignment is its value
                loops = {k: v for k, v in loops.items() if v != child.id}
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.List)
        ):
            started[node.targets[0].id] = node.value
        if appended is not None and filled is not None:
            comprehension = appended[1]
            started[filled] = ast.copy_location(ast.BinOp(started[filled], ast.Add(), comprehension), node)
            grown[filled] = started[filled]
            loops[id(node)] = filled
    return grown, loops


def _appending_loop(node: ast.stmt) -> tuple[str, ast.ListComp] | None:
    """`for a in A: for b in B: NAME.append(e)` (nothing else in the loops, no `else:`) as NAME
    and `[e for a in A for b in B]`."""
    generators: list[ast.comprehension] = []
    inner = node
    while isinstance(inner, ast.For) and not inner.orelse and len(inner.body) == 1:
        generators.append(ast.comprehension(target=inner.target, iter=inner.iter, ifs=[], is_async=0))
        inner = inner.body[0]
    if not generators or not isinstance(inner, ast.Expr) or not isinstance(inner.value, ast.Call):
        return None
    call = inner.value
    if not (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and not call.keywords
    ):
        return None
    name = call.func.value.id
    read = [call.args[0]] + [part for g in generators for part in (g.target, g.iter)]
    if any(isinstance(n, ast.Name) and n.id == name for part in read for n in ast.walk(part)):
        return None  # a loop that reads the list it grows
    return name, ast.copy_location(ast.ListComp(elt=call.args[0], generators=generators), node)


def _mutated(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    for child in ast.walk(node):
        if (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Attribute)
            and isinstance(child.func.value, ast.Name)
        ):
            names.add(child.func.value.id)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
    return names


def _test_function(tree: ast.Module, functions: dict[str, ast.FunctionDef]) -> str | None:
    """The harness function main() calls for --correctness (`if args.correctness: run(...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "correctness" in ast.unparse(node.test):
            for child in (c for statement in node.body for c in ast.walk(statement)):
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                    called = functions.get(child.func.id)
                    if called is not None and any(isinstance(n, ast.For) for n in ast.walk(called)):
                        return called.name
    return None


def _kernel_functions(
    tree: ast.Module, test: ast.FunctionDef, kernel_tree: ast.Module, harness: str
) -> tuple[dict[str, str], str]:
    """The harness's names for functions of the kernel file ({name: function}: imported at its
    top level or in the test function, by name or by an alias the kernel file assigns), and the
    name of the module they come from (the kernel module's name in the loop)."""
    defined = {n.name: n.name for n in kernel_tree.body if isinstance(n, ast.FunctionDef)}
    for node in kernel_tree.body:  # `gemm_a16w16 = gemm`
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in defined:
            defined.update({t.id: node.value.id for t in node.targets if isinstance(t, ast.Name)})
    names: dict[str, str] = {}
    module = ""
    for node in list(tree.body) + [n for n in ast.walk(test) if isinstance(n, ast.ImportFrom)]:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name in defined:
                    names[alias.asname or alias.name] = defined[alias.name]
                    module = module or node.module.rsplit(".", 1)[-1]
    if not names:
        raise LayoutNotRead(f"{harness} imports no function of the kernel file")
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    while module in taken or not module.isidentifier():
        module = f"_{module}" if module.isidentifier() else "kernel_module"
    return names, module


def _parameters(test: ast.FunctionDef, tree: ast.Module, constants: Constants, harness: str) -> dict[str, Any]:
    """run_correctness's parameters, as main() gives them for --correctness (CannotRead when one
    cannot be read is kept as the exception, raised where the parameter is needed)."""
    spec = test.args
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    defaults: dict[str, ast.expr] = dict(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults))
    defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None})
    call, local = _correctness_call(tree, test.name)
    given: dict[str, ast.expr] = {}
    if call is not None:
        given.update(zip(positional, call.args))
        given.update({k.arg: k.value for k in call.keywords if k.arg})
    argparse_defaults = _argparse_defaults(tree)
    values: dict[str, Any] = {}
    for name in positional + [a.arg for a in spec.kwonlyargs]:
        try:
            if name in given:
                values[name] = _main_value(given[name], local, argparse_defaults, constants)
            elif name in defaults:
                values[name] = constants.evaluate(defaults[name], {})
            else:
                raise CannotRead(f"main() does not give {TEST_FUNCTION}() its {name!r}")
        except (CannotRead, KeyError, IndexError, TypeError, ValueError) as error:
            values[name] = CannotRead(str(error) or f"{name!r}")
            continue
        if values[name] is None:  # `if shapes is None: shapes = CORRECTNESS_CONFIGS`
            replaced = _none_default(test, name)
            if replaced is not None:
                try:
                    values[name] = constants.evaluate(replaced, {})
                except (CannotRead, KeyError, IndexError, TypeError, ValueError) as error:
                    values[name] = CannotRead(str(error))
    return values


def _correctness_call(tree: ast.Module, test: str) -> tuple[ast.Call | None, dict[str, ast.expr]]:
    """main()'s call of run_correctness for --correctness, and the assignments before it in main."""
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != test):
        local: dict[str, ast.expr] = {}
        for node in _walk_in_order(function.body):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                local[node.targets[0].id] = node.value
            for child in ast.walk(node):
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == test:
                    return child, local
    return None, {}


def _walk_in_order(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements in source order, a branch's before the next statement; an `if` whose test
    names a mode other than --correctness is skipped."""
    for node in body:
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "args." in test and "correctness" not in test:
                yield from _walk_in_order(node.orelse)
                continue
            yield from _walk_in_order(node.body)
            yield from _walk_in_order(node.orelse)
        elif isinstance(node, (ast.Try, ast.With)):
            yield from _walk_in_order(node.body)
        else:
            yield node


def _main_value(
    node: ast.expr, local: dict[str, ast.expr], argparse_defaults: dict[str, Any], constants: Constants
) -> Any:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in argparse_defaults:
        return argparse_defaults[node.attr]
    if isinstance(node, ast.Name) and node.id in local:
        return _main_value(
            local[node.id], {k: v for k, v in local.items() if k != node.id}, argparse_defaults, constants
        )
    return constants.evaluate(node, {})


def _argparse_defaults(tree: ast.Module) -> dict[str, Any]:
    """`parser.add_argument("--atol", type=float, default=0.25)` -> {"atol": 0.25}."""
    found: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = [flag for flag in flags if flag.startswith("--")]
            keywords = {k.arg: k.value for k in node.keywords}
            if not long or "default" not in keywords:
                continue
            dest = keywords.get("dest")
            name = dest.value if isinstance(dest, ast.Constant) else long[0][2:].replace("-", "_")
            try:
                found[name] = ast.literal_eval(keywords["default"])
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
    return found


def _none_default(test: ast.FunctionDef, name: str) -> ast.expr | None:
    for node in test.body:
        if (
            isinstance(node, ast.If)
            and ast.unparse(node.test) == f"{name} is None"
            and len(node.body) == 1
            and isinstance(node.body[0], ast.Assign)
            and ast.unparse(node.body[0].targets[0]) == name
        ):
            return node.body[0].value
    return None


def _cases(
    loop: ast.For, parameters: dict[str, Any], constants: Constants, harness: str
) -> tuple[list[Any], str | None, ast.expr, list[ast.stmt]]:
    """The case values, the name of the case index, what each case is bound to, the loop body."""
    iterated, index, target = loop.iter, None, loop.target
    if is_call_with_one_argument(iterated, "enumerate"):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
            raise LayoutNotRead(f"{harness}: the loop target `{ast.unparse(target)}` is not `i, case`")
        iterated, index, target = iterated.args[0], target.elts[0].id, target.elts[1]
    values = _iterated(iterated, parameters, constants)
    body = flatten(loop.body)
    first = body[0] if body else None
    # `for idx in indices: cfg = ALL_CONFIGS[idx]`: the cases are ALL_CONFIGS (all of it, in order)
    if (
        isinstance(target, ast.Name)
        and isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.value, ast.Subscript)
        and isinstance(first.value.slice, ast.Name)
        and first.value.slice.id == target.id
    ):
        try:
            configs = constants.evaluate(first.value.value, {})
        except (CannotRead, KeyError, IndexError, TypeError, ValueError) as error:
            raise CasesByCode(
                f"the harness's cases `{ast.unparse(first.value.value)}` cannot be read: {error}"
            ) from None
        if list(values) != list(range(len(configs))):
            raise CasesByCode(
                f"{TEST_FUNCTION}() is given {len(values)} of the {len(configs)} configs, not all in order"
            )
        return list(configs), target.id, first.targets[0], body[1:]
    return list(values), index, target, body


def _iterated(node: ast.expr, parameters: dict[str, Any], constants: Constants) -> list[Any]:
    shown = ast.unparse(node)
    try:
        if isinstance(node, ast.Name) and node.id in parameters:
            value = parameters[node.id]
            if isinstance(value, CannotRead):
                raise value
        else:
            value = constants.evaluate(node, {})
    except (CannotRead, KeyError, IndexError, TypeError, ValueError) as error:
        raise CasesByCode(f"the harness's cases `{shown}` cannot be read: {error}") from None
    if not isinstance(value, (list, tuple)) or not value:
        raise CasesByCode(f"the harness's cases `{shown}` are not a non-empty list")
    return list(value)


def _dict_cases(
    shapes: list[Any], target: ast.expr, body: list[ast.stmt], harness: str
) -> tuple[list[Any], ast.expr, list[ast.stmt]]:
    """Dict cases as one name per key: `cfg["M"]` is `M`, `f(**cfg)` is `f(M=M, ...)`."""
    if not (isinstance(target, ast.Name) and all(isinstance(case, dict) for case in shapes)):
        return shapes, target, body
    keys = list(shapes[0])
    if any(list(case) != keys for case in shapes) or not all(isinstance(k, str) and k.isidentifier() for k in keys):
        raise LayoutNotRead(f"{harness}: the cases are dicts with other keys from case to case")
    name = target.id
    rewriter = _DictCase(name, keys)
    body = [ast.fix_missing_locations(rewriter.visit(copy.deepcopy(statement))) for statement in body]
    body = [statement for statement in body if not _self_assignment(statement)]  # `M = cfg["M"]` is `M = M`
    names = ast.Tuple([ast.Name(key, ast.Store()) for key in keys], ast.Store())
    return [tuple(case[key] for key in keys) for case in shapes], ast.copy_location(names, target), body


def _self_assignment(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and ast.dump(_as_load(node.targets[0])) == ast.dump(node.value)
    )


def _as_load(node: ast.expr) -> ast.expr:
    class Load(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            return ast.Name(name.id, ast.Load())

        def visit_Tuple(self, elements: ast.Tuple) -> ast.AST:
            return ast.Tuple([self.visit(e) for e in elements.elts], ast.Load())

    return Load().visit(copy.deepcopy(node))  # type: ignore[no-any-return]


class _DictCase(ast.NodeTransformer):
    def __init__(self, name: str, keys: list[str]) -> None:
        self.name, self.keys = name, keys

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == self.name
            and isinstance(node.slice, ast.Constant)
            and node.slice.value in self.keys
        ):
            return ast.copy_location(ast.Name(node.slice.value, node.ctx), node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        keywords: list[ast.keyword] = []
        for keyword in node.keywords:
            if keyword.arg is None and isinstance(keyword.value, ast.Name) and keyword.value.id == self.name:
                keywords += [ast.keyword(key, ast.Name(key, ast.Load())) for key in self.keys]
            else:
                keywords.append(keyword)
        node.keywords = keywords
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):  # the whole case: a dict of the names
            keys: list[ast.expr | None] = [ast.Constant(key) for key in self.keys]
            return ast.copy_location(ast.Dict(keys, [ast.Name(key, ast.Load()) for key in self.keys]), node)
        return node


def is_literal_value(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(is_literal_value(item) for item in value)
    return isinstance(value, (int, float, str, bool)) or value is None


def assignment(name: str, value: Any, at: ast.stmt) -> ast.stmt:
    return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], ast.parse(repr(value), mode="eval").body), at)
