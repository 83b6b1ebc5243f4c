"""The correctness test of an AgentKernelArena task runner, read from its `ast`.

The layout read (their vLLM tasks): a module-level `TEST_SHAPES` list and a `run_correctness()`
that loads the kernel file as a module (`mod = load_module()`) and loops over TEST_SHAPES; each
pass seeds torch, draws inputs, calls one kernel function (`result = mod.fn(...)`, or
`q, scales = mod.fn(...)` for a kernel that returns several tensors), computes a reference and
compares each output with it (`torch.allclose`, `torch.equal` or `assert_close`, one comparison
per output). This module finds those parts and refuses, with the line, any statement before the
last comparison it would have to run to know the inputs (a loop filling an index tensor, a helper
building the inputs) or the outputs' checks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from arena.importer.branch_assignments import merge_branch_assignments
from arena.importer.constant_sums import fold_constant_sums
from arena.importer.fill_loops import fold_fill_loops
from arena.importer.helper_inlining import inline_helpers
from arena.importer.launch import Adapter
from arena.importer.literal_spreading import spread_literals
from arena.importer.outcome import CasesByCode, KernelCallNotRead, LayoutNotRead, NotImportable, PartialCheck
from arena.importer.output_loops import unroll_output_loops
from arena.importer.picked_outputs import pick_compared
from arena.importer.rewrites import fold_constant_ifs, literal_bindings
from arena.importer.special_values import merge_special_value_checks
from arena.importer.written_region import written_region

SHAPES_NAME = "TEST_SHAPES"
TEST_FUNCTION = "run_correctness"
# The comparison functions a test may call, by the kind of comparison they make.
_COMPARISONS = {
    "allclose": "allclose",
    "equal": "equal",
    "assert_close": "assert_close",
    "assert_allclose": "assert_close",
}
# Methods that move or copy a compared tensor without changing its values, and those that cast it.
_MOVES = frozenset(("cpu", "cuda", "contiguous", "clone", "detach", "to"))
_CASTS = frozenset(("float", "double", "half", "bfloat16"))
# Statements before the last comparison that are kept as they are: loops and branches that compute
# the reference (or prepare an input, which task_fields then refuses by name), in-place updates.
_FOLLOWED = (ast.For, ast.While, ast.If, ast.With, ast.AugAssign, ast.Expr, ast.Assert)
# Methods that change the object they are called on (a list the reference collects into).
_MUTATORS = frozenset(("append", "extend", "insert", "update", "copy_", "fill_", "zero_"))


@dataclass(frozen=True)
class Comparison:
    """How the test compares one of the kernel's outputs with its reference."""

    output: str  # the name the test binds that output to (one of TestLoop.result_names)
    kind: str  # "allclose", "equal" or "assert_close"
    reference: ast.expr  # the reference side, without moves and casts
    cast: bool  # either side is cast before comparing (so their dtypes may differ)
    atol: ast.expr | None  # None: the comparison's default
    rtol: ast.expr | None
    # the part of an argument written in place that the test compares (`out[:n]`: the slice
    # `:n`; arena.importer.written_region), None where it compares the whole output
    region: ast.expr | None = None


@dataclass(frozen=True)
class TestLoop:
    """run_correctness's parts; statements are the runner's own nodes."""

    shapes: tuple[object, ...]  # TEST_SHAPES, one value per case
    index: str | None  # the name enumerate() gives the case's index
    target: ast.expr  # what each TEST_SHAPES value is unpacked into
    setup: tuple[ast.stmt, ...]  # run_correctness's imports and assignments before the loop
    module_name: str  # the name the kernel module is bound to (`mod`)
    seed: ast.expr | None  # the argument of torch.manual_seed in the loop
    statements: tuple[ast.stmt, ...]  # the loop's assignments before the last comparison, the call among them
    call: ast.Assign | ast.Expr  # `result = mod.fn(...)`, `q, scales = mod.fn(...)`, or `mod.fn(x, out)`
    comparisons: tuple[Comparison, ...]  # one per output, in the order the kernel returns them
    adapter: Adapter | None = None  # the function written around a launch the test makes itself
    # a bool or string the case loop unpacks, that the entry takes as the index of the case's value
    # among these (arena.importer.scalar_arguments): (the test's name, the entry's parameter, values)
    choices: tuple[tuple[str, str, tuple[bool | str, ...]], ...] = ()
    # the elements of the tuple the kernel function returns that the test keeps, where it keeps
    # some only (`out, _, _ = mod.fn(...)`: (0,); arena.importer.picked_outputs); () for all
    picked: tuple[int, ...] = ()
    # a tensor the test gives in some cases and None in others: (its name, the entry's 0/1 flag
    # saying whether it is given; arena.importer.scalar_arguments)
    optional: tuple[tuple[str, str], ...] = ()

    @property
    def result_names(self) -> tuple[str, ...]:
        """The names the test binds the kernel's outputs to, in the order it returns them, then
        the arguments it writes into that the test compares, in the call's order."""
        if self.writes:
            return tuple(comparison.output for comparison in self.comparisons)
        return result_names(self.call) + self.written

    @property
    def written(self) -> tuple[str, ...]:
        """The arguments the kernel writes into that the test compares (outputs written in place)."""
        returned = () if isinstance(self.call, ast.Expr) else result_names(self.call)
        return tuple(comparison.output for comparison in self.comparisons if comparison.output not in returned)

    @property
    def writes(self) -> bool:
        """Whether the kernel returns nothing and the test compares arguments it writes into."""
        return isinstance(self.call, ast.Expr)

    @property
    def several(self) -> bool:
        """Whether the kernel returns several tensors (the test unpacks its result), or writes several."""
        if isinstance(self.call, ast.Expr):
            return len(self.comparisons) > 1
        return not isinstance(self.call.targets[0], ast.Name)

    @property
    def kernel_call(self) -> ast.Call:
        return self.call.value  # type: ignore[return-value]

    @property
    def function_name(self) -> str:
        return self.kernel_call.func.attr  # type: ignore[attr-defined]


def read_test_loop(tree: ast.Module, runner: str) -> TestLoop:
    """The test loop of the runner `tree` (shown as `runner` in reasons)."""
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == TEST_FUNCTION), None)
    setup, loop = setup_and_loop(function.body) if function is not None else ([], None)
    shapes_name = _iterated_name(loop) if loop is not None and not _has_shapes(tree) else SHAPES_NAME
    shapes = _shapes(tree, runner, shapes_name)
    if function is None:
        raise LayoutNotRead(f"{runner} defines no {TEST_FUNCTION}()")
    if loop is None:
        raise LayoutNotRead(f"{TEST_FUNCTION}() in {runner} has no loop over its cases")
    index, target = _loop_target(loop, runner, shapes_name)
    module_name = _module_name(setup, tree)
    body = loop.body[0].body if len(loop.body) == 1 and isinstance(loop.body[0], ast.Try) else loop.body
    # Helpers that draw the inputs before the kernel is called (`args, kwargs = gen_inputs(seed)`)
    # inlined, and `mod.fn(*args, **kwargs)` of literal tuples and dicts spread
    # (arena.importer.helper_inlining, .literal_spreading).
    helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != TEST_FUNCTION}
    body = spread_literals(inline_helpers(list(body), helpers, {}, runner, 0, module_name))
    body = fold_constant_ifs(body, literal_bindings(setup))
    body = merge_branch_assignments(body)  # `if c: x = f(a) else: x = f(b)` as `x = f(a if c else b)`
    body = unroll_output_loops(body, helpers, module_name)
    body, picked = pick_compared(body, module_name)
    seed, statements, call, comparisons = read_loop_body(body, module_name, runner)
    return TestLoop(
        shapes, index, target, tuple(setup), module_name, seed, tuple(statements), call, comparisons, picked=picked
    )


def result_names(call: ast.Assign | ast.Expr) -> tuple[str, ...]:
    """`result = mod.fn(...)` -> ("result",); `q, scales = mod.fn(...)` -> ("q", "scales");
    `mod.fn(x, out, n)`, which returns nothing: the arguments it may write, ("x", "out", "n")."""
    if isinstance(call, ast.Expr):
        return tuple(arg.id for arg in call.value.args if isinstance(arg, ast.Name))  # type: ignore[attr-defined]
    target = call.targets[0]
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    return tuple(element.id for element in elements)  # type: ignore[attr-defined]


def _has_shapes(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign) and any(getattr(t, "id", "") == SHAPES_NAME for t in node.targets)
        for node in tree.body
    )


def _iterated_name(loop: ast.For) -> str:
    """The name the loop iterates (`for i, seed in enumerate(SEEDS)`: SEEDS); TEST_SHAPES if none."""
    iterated = loop.iter
    if isinstance(iterated, ast.Call) and getattr(iterated.func, "id", "") == "enumerate" and iterated.args:
        iterated = iterated.args[0]
    return iterated.id if isinstance(iterated, ast.Name) and iterated.id.isupper() else SHAPES_NAME


def _shapes(tree: ast.Module, runner: str, name: str = SHAPES_NAME) -> tuple[object, ...]:
    """The literal list of the cases: TEST_SHAPES, or the top-level list the loop iterates
    (`SEEDS = [42, 43]`: one case per seed, the shapes made by a helper the loop calls)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                raise CasesByCode(f"{name} in {runner} is not a literal list") from None
            if not isinstance(value, (list, tuple)) or not value:
                raise CasesByCode(f"{name} in {runner} is not a non-empty list")
            return tuple(value)
    raise CasesByCode(f"{runner} has no {SHAPES_NAME} list: its cases are made by code the importer does not run")


def setup_and_loop(body: list[ast.stmt]) -> tuple[list[ast.stmt], ast.For | None]:
    """The imports and assignments before the first loop (inside try/with too), and that loop."""
    setup: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.For):
            return setup, node
        if isinstance(node, (ast.Try, ast.With)):
            inner, loop = setup_and_loop(node.body)
            setup += inner
            if loop is not None:
                return setup, loop
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)):
            setup.append(node)
    return setup, None


def _loop_target(loop: ast.For, runner: str, shapes_name: str = SHAPES_NAME) -> tuple[str | None, ast.expr]:
    iterated = loop.iter
    enumerated = (
        isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "enumerate"
    )
    source = iterated.args[0] if enumerated and iterated.args else iterated  # type: ignore[attr-defined]
    if not (isinstance(source, ast.Name) and source.id == shapes_name):
        raise LayoutNotRead(f"{TEST_FUNCTION}() loops over `{ast.unparse(iterated)}`, not over {shapes_name}")
    if not enumerated:
        return None, loop.target
    target = loop.target
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
        raise LayoutNotRead(f"{runner}: the loop target `{ast.unparse(target)}` is not `i, shape`")
    return target.elts[0].id, target.elts[1]


def _module_name(setup: list[ast.stmt], tree: ast.Module) -> str:
    """The name run_correctness binds the loaded kernel module to: `mod = load_module()`."""
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for node in setup:
        value = getattr(node, "value", None)
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in functions
        ):
            return node.targets[0].id
    raise LayoutNotRead(f"{TEST_FUNCTION}() loads no kernel module (`mod = load_module()`)")


# read_loop_body's answer: the seed, the statements, the kernel call, one comparison per output
_LoopPass = tuple[ast.expr | None, list[ast.stmt], ast.Assign | ast.Expr, tuple[Comparison, ...]]


def read_loop_body(body: list[ast.stmt], module_name: str, runner: str) -> _LoopPass:
    """One pass of the loop: its seed, its statements up to the last comparison (the kernel call
    among them), that call, and one comparison per output."""
    reader = _LoopBodyReader(module_name, runner)
    for node in merge_special_value_checks(fold_constant_sums(fold_fill_loops(body))):
        if not reader.read(node):
            break
    return reader.result()


@dataclass
class _LoopBodyReader:
    """What read_loop_body has read of one pass so far, statement by statement."""

    module_name: str
    runner: str
    seed: ast.expr | None = None
    statements: list[ast.stmt] = field(default_factory=list)
    call: ast.Assign | ast.Expr | None = None
    pending: list[ast.stmt] = field(default_factory=list)  # statements after a comparison of a written argument
    found: dict[str, Comparison] = field(default_factory=dict)  # by output name, in the order the test compares them
    complete: bool = False  # every output the kernel returns is compared; an argument may follow

    def read(self, node: ast.stmt) -> bool:
        """Read `node`; False where the pass ends before it (what follows checks nothing more)."""
        compared = _comparison_call(node)
        if self.complete and isinstance(self.call, ast.Assign):
            return self._read_written_comparison(compared, self.call)
        if compared is not None:
            self._add_comparison(node, compared)
            return True
        torch_call = _torch_call_name(node)
        if self.found:
            return self._read_between_comparisons(node, torch_call)
        self._read_before_comparisons(node, torch_call)
        return True

    def _read_written_comparison(self, compared: ast.Call | None, call: ast.Assign) -> bool:
        """After every returned output is compared: a comparison of an argument the kernel writes, or the end."""
        try:
            extra = _read_comparison(compared, call, self.found, self.runner) if compared is not None else None
        except NotImportable:
            extra = None
        if extra is None or extra.output in result_names(call):
            return False
        self.found[extra.output] = extra
        return True

    def _add_comparison(self, node: ast.stmt, compared: ast.Call) -> None:
        """One output's comparison; the statements held since the last one now belong to the pass."""
        if self.call is None:
            raise PartialCheck(f"line {node.lineno}: the test compares before it calls the kernel")
        comparison = _read_comparison(
            compared, self.call, self.found, self.runner, _aliases(self.statements, self.call)
        )
        self.found[comparison.output] = comparison
        self.statements += self.pending
        self.pending = []
        names = result_names(self.call)
        self.complete = isinstance(self.call, ast.Assign) and all(name in self.found for name in names)

    def _read_between_comparisons(self, node: ast.stmt, torch_call: str) -> bool:
        """A statement after a comparison that changes nothing compared: kept, or held until the next
        comparison where the kernel writes its outputs into its arguments."""
        if torch_call == "synchronize":
            return True
        if isinstance(self.call, ast.Expr):  # the test may compare another written argument later
            try:
                self.pending.append(_between_comparisons(node, self.found, self.module_name))
            except NotImportable:
                return False  # what follows checks nothing more the importer reads
            return True
        self.statements.append(_between_comparisons(node, self.found, self.module_name))
        return True

    def _read_before_comparisons(self, node: ast.stmt, torch_call: str) -> None:
        """The seed, the kernel call and the statements that draw the inputs and compute the reference."""
        if torch_call == "manual_seed":
            self.seed = node.value.args[0] if node.value.args else None  # type: ignore[attr-defined]
        elif torch_call == "synchronize":
            return
        elif _calls_module(node, self.module_name):
            _check_kernel_call(node, self.module_name, self.call)
            self.call = node  # type: ignore[assignment]
            self.statements.append(node)
        elif isinstance(node, (ast.Assign, ast.Import, ast.ImportFrom) + _FOLLOWED):
            self.statements.append(node)  # an input a compound statement writes is refused where it is read
        else:
            first = ast.unparse(node).splitlines()[0]
            raise LayoutNotRead(
                f"line {node.lineno}: `{first[:70]}` prepares the case with code the importer does not follow"
            )

    def result(self) -> _LoopPass:
        """read_loop_body's answer, with the comparisons in the order the kernel gives its outputs."""
        call, found = self.call, self.found
        if self.complete and isinstance(call, ast.Assign):
            # what it returns, then the arguments it writes that the test compares, in the call's order
            names = result_names(call)
            written = tuple(name for name in _argument_names(call) if name in found and name not in names)
            return self.seed, self.statements, call, tuple(found[name] for name in names + written)
        if isinstance(call, ast.Expr) and found:  # the written arguments, in the call's order
            return self.seed, self.statements, call, tuple(found[name] for name in result_names(call) if name in found)
        raise _unchecked_outputs(call, found, self.module_name)


def _unchecked_outputs(
    call: ast.Assign | ast.Expr | None, found: dict[str, Comparison], module_name: str
) -> PartialCheck:
    """Why a pass that ended without comparing every output is refused."""
    if isinstance(call, ast.Expr):
        function = f"`{module_name}.{call.value.func.attr}`"  # type: ignore[attr-defined]
        return PartialCheck(f"{function} returns nothing and the test compares none of the tensors it is given")
    if call is not None and found:
        names = result_names(call)
        function = f"`{module_name}.{call.value.func.attr}`"  # type: ignore[attr-defined]
        return PartialCheck(
            f"{function} returns {len(names)} tensors and the test compares {len(found)} of them "
            f"({', '.join(found)}); arena checks every output"
        )
    return PartialCheck(f"{TEST_FUNCTION}() never compares the kernel's output with a reference")


def written_names(statement: ast.stmt) -> set[str]:
    """The names a statement binds or writes into: plain targets, the tensors behind `x[i] = ...`
    and `x.data = ...`, receivers of in-place methods (`x.fill_(0)`, `ref.append(v)`) and of
    `out=`, the arguments of a call made for what it does (`reference_fill(ref, x)`), anywhere
    inside it (the body of a loop or a branch too)."""
    names: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            names.add(_base(node))
        elif isinstance(node, ast.Call):
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if method in _MUTATORS or (method.endswith("_") and not method.startswith("_")):
                names.add(_base(node.func.value))  # type: ignore[attr-defined]
            names |= {_base(k.value) for k in node.keywords if k.arg == "out"}
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):  # `fill(ref, x)` may write either
            call = node.value
            names |= {_base(arg) for arg in call.args} | {_base(k.value) for k in call.keywords}
    return names - {""}


def _base(node: ast.expr) -> str:
    """`x` for `x`, `x[i]`, `x.data`, `x[i][j]`; "" for anything else."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _between_comparisons(node: ast.stmt, found: dict[str, Comparison], module_name: str) -> ast.stmt:
    """A statement after the test compared some outputs and before it compares the others: an
    assignment (or import) that changes nothing the earlier comparisons read."""
    first = ast.unparse(node).splitlines()[0][:70]
    if _calls_module(node, module_name):
        raise KernelCallNotRead(f"line {node.lineno}: `{first}`: the test calls the kernel module again")
    if not isinstance(node, (ast.Assign, ast.Import, ast.ImportFrom)):
        raise PartialCheck(f"line {node.lineno}: `{first}` checks the case with code the importer does not follow")
    read = set(found) | {n.id for c in found.values() for n in ast.walk(c.reference) if isinstance(n, ast.Name)}
    stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    stored |= {(a.asname or a.name).split(".")[0] for a in getattr(node, "names", [])}
    changed = sorted(stored & read)
    if changed:
        raise PartialCheck(f"line {node.lineno}: `{first}` rebinds {changed[0]!r} after the test compared it")
    return node


def _aliases(statements: list[ast.stmt], call: ast.Assign | ast.Expr) -> dict[str, ast.expr]:
    """Names the statements after the kernel call bind once to a plain expression of one name."""
    after = statements[statements.index(call) + 1 :] if call in statements else []
    bound: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for node in statements:
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
            counts[name] = counts.get(name, 0) + 1
    for node in after:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
    return {name: value for name, value in bound.items() if counts.get(name) == 1}


def _torch_call_name(node: ast.stmt) -> str:
    """ "manual_seed" for `torch.manual_seed(...)`, "synchronize" for `torch.cuda.synchronize()`."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        dotted = ast.unparse(node.value.func)
        if dotted in ("torch.manual_seed", "torch.cuda.manual_seed", "torch.cuda.synchronize"):
            return dotted.rsplit(".", 1)[-1]
    return ""


def _calls_module(node: ast.stmt, module_name: str) -> bool:
    return any(
        isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id == module_name
        for child in ast.walk(node)
    )


def _check_kernel_call(node: ast.stmt, module_name: str, earlier: ast.Assign | ast.Expr | None) -> None:
    shown = f"line {node.lineno}: `{ast.unparse(node).splitlines()[0][:70]}`"
    if earlier is not None:
        raise KernelCallNotRead(f"{shown}: the test calls the kernel module twice in one case")
    if not isinstance(node, (ast.Assign, ast.Expr)):
        kind = type(node).__name__.lower()
        raise KernelCallNotRead(f"{shown}: the test calls the kernel inside a `{kind}` statement")
    value = node.value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        raise KernelCallNotRead(f"{shown}: the kernel module is used other than by calling one function")
    if not (isinstance(value.func.value, ast.Name) and value.func.value.id == module_name):
        raise KernelCallNotRead(f"{shown}: the test uses the kernel's output inside an expression")
    if isinstance(node, ast.Expr):
        return  # it writes into its arguments: the test's comparisons say which
    targets = node.targets if isinstance(node, ast.Assign) else []
    if len(targets) != 1:
        raise KernelCallNotRead(f"{shown}: the kernel's output is bound to {len(targets)} targets")
    target = targets[0]
    if isinstance(target, (ast.Tuple, ast.List)):
        if not all(isinstance(element, ast.Name) for element in target.elts):
            raise KernelCallNotRead(f"{shown}: the kernel's outputs are unpacked into other than plain names")
    elif not isinstance(target, ast.Name):
        raise KernelCallNotRead(f"{shown}: the kernel's output is stored into an element")


def _comparison_call(node: ast.stmt) -> ast.Call | None:
    tests = {ast.If: "test", ast.Assert: "test", ast.Expr: "value"}
    attribute = tests.get(type(node))
    if attribute is None:
        return None
    elementwise = _all_equal(getattr(node, attribute))
    if elementwise is not None:
        return elementwise
    for child in ast.walk(getattr(node, attribute)):
        if isinstance(child, ast.Call):
            name = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", "")
            if name in _COMPARISONS:
                return child
    return None


def _all_equal(test: ast.expr) -> ast.Call | None:
    """`(a == b).all()` as the `torch.equal(a, b)` it is where a and b have one shape (the
    readers check that each output is compared whole, with a reference of its shape)."""
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "all"
        and not test.args
        and not test.keywords
    ):
        return None
    compared = test.func.value
    if not (isinstance(compared, ast.Compare) and len(compared.ops) == 1 and isinstance(compared.ops[0], ast.Eq)):
        return None
    func = ast.Attribute(ast.Name("torch", ast.Load()), "equal", ast.Load())
    call = ast.Call(func=func, args=[compared.left, compared.comparators[0]], keywords=[])
    return ast.fix_missing_locations(ast.copy_location(call, test))


def _through_aliases(
    node: ast.expr, cast: bool, aliases: dict[str, ast.expr], outputs: tuple[str, ...]
) -> tuple[ast.expr, bool]:
    """`r_cpu` after `r_cpu = result.float().cpu()`: the output `result`, cast (a name the test
    binds to a move or cast of an output is that output)."""
    seen: set[str] = set()
    base, cast_on_the_way = node, cast
    while isinstance(base, ast.Name) and base.id in aliases and base.id not in seen:
        seen.add(base.id)
        base, moved_cast = _strip(aliases[base.id])
        cast_on_the_way = cast_on_the_way or moved_cast
    if isinstance(base, ast.Name) and base.id in outputs:
        return base, cast_on_the_way
    return node, cast


def _read_comparison(
    call: ast.Call,
    kernel: ast.Assign | ast.Expr,
    found: dict[str, Comparison],
    runner: str,
    aliases: dict[str, ast.expr] | None = None,
) -> Comparison:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    kind = _COMPARISONS[name]
    if len(call.args) < 2:
        raise PartialCheck(f"line {call.lineno}: {name}() without both tensors as arguments")
    outputs = result_names(kernel)
    if isinstance(kernel, ast.Assign):  # a kernel that returns may also write an argument the test compares
        outputs += tuple(name for name in _argument_names(kernel) if name not in outputs)
    sides = [_strip(arg) for arg in call.args[:2]]
    ours = [index for index, (base, _) in enumerate(sides) if isinstance(base, ast.Name) and base.id in outputs]
    region = None
    if not ours:  # `out.cpu()[:n]` compared with `ref[:n]`: the part of a written argument the test checks
        returned = () if isinstance(kernel, ast.Expr) else result_names(kernel)
        written = tuple(name for name in outputs if name not in returned)
        regions = [written_region(arg, written, _strip) for arg in call.args[:2]]
        if sum(r is not None for r in regions) == 1:
            at = next(i for i, r in enumerate(regions) if r is not None)
            (name, region, cast), other = regions[at], sides[1 - at]  # type: ignore[misc]
            part = (ast.Name(name, ast.Load()), cast)
            sides = [part, other] if at == 0 else [other, part]
            ours = [at]
    if not ours and aliases:  # `r_cpu = result.float().cpu()` compared: the output, cast
        sides = [_through_aliases(*side, aliases, outputs) for side in sides]
        ours = [index for index, (base, _) in enumerate(sides) if isinstance(base, ast.Name) and base.id in outputs]
    if len(ours) != 1:
        shown = outputs if isinstance(kernel, ast.Expr) else result_names(kernel)
        whole = f"the whole output {shown[0]!r}" if len(shown) == 1 else f"one whole output ({', '.join(shown)})"
        raise PartialCheck(f"line {call.lineno}: `{ast.unparse(call)[:80]}` does not compare {whole} with a reference")
    output = sides[ours[0]][0].id  # type: ignore[attr-defined]
    if output in found:
        raise PartialCheck(f"line {call.lineno}: the test compares {output!r} a second time")
    reference, reference_cast = sides[1 - ours[0]]
    keywords = {k.arg: k.value for k in call.keywords}
    positional = dict(zip(("rtol", "atol"), call.args[2:4])) if kind == "allclose" else {}
    return Comparison(
        output=output,
        kind=kind,
        reference=reference,
        cast=reference_cast or sides[ours[0]][1],
        atol=keywords.get("atol", positional.get("atol")),
        rtol=keywords.get("rtol", positional.get("rtol")),
        region=region,
    )


def _argument_names(call: ast.Assign | ast.Expr) -> tuple[str, ...]:
    return tuple(arg.id for arg in call.value.args if isinstance(arg, ast.Name))  # type: ignore[attr-defined]


def _strip(node: ast.expr) -> tuple[ast.expr, bool]:
    """(the tensor compared, whether it is cast first): `ref.float().cpu()` -> (ref, True)."""
    cast = False
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method in _CASTS or (method == "to" and _casts(node)):
            cast = True
        elif method not in _MOVES:
            break
        node = node.func.value
    return node, cast


def _casts(call: ast.Call) -> bool:
    """Whether a .to(...) may change the dtype: anything but a device (`device`, `x.device`, "cuda")."""
    if any(k.arg == "dtype" for k in call.keywords):
        return True
    for arg in call.args:
        is_device = (
            (isinstance(arg, ast.Name) and "device" in arg.id)
            or (isinstance(arg, ast.Attribute) and arg.attr == "device")
            or isinstance(arg, ast.Constant)
        )
        if not is_device:
            return True
    return False
