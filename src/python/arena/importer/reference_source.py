"""reference.py for an imported task: the test's reference as a function of the inputs.

The harness calls `reference(*inputs, **scalars)`, as it calls the kernel. Its body is the loop's
statements the compared reference depends on, after bindings for the names they use: the inputs
and scalars by parameter, dims read from the inputs' shapes, values the same in every case as
literals, the test's device as the inputs'. The runner's functions and constants those statements
need are copied above it unchanged; its other top-level code (which changes directory, loads
the kernel) is left out. The result is moved to the inputs' device and cast to the declared
output dtype, as the test compares after its own casts; for a kernel that returns several
tensors, a tuple of the references the test compares each with, in the kernel's order.
"""

from __future__ import annotations

import ast
import builtins
import copy
from dataclasses import dataclass
from typing import Any, Mapping

from arena.importer.calls import is_call_with_one_argument
from arena.importer.correctness import TestLoop, written_names
from arena.importer.fields import TaskFields, TensorField
from arena.importer.follow import FollowedCase
from arena.importer.outcome import ReferenceNotWritten
from arena.importer.values import DType, Unknown, same_value
from arena.task.task import CASE_DTYPE

REFERENCE_FUNCTION = "reference"
_OTHER_NAME = "arena_reference"  # when the runner defines a `reference` of its own


def reference_function(tree: ast.Module) -> str:
    """The name of reference.py's function: `reference`, or another when the test's own file
    defines `reference` (a function reference.py may copy)."""
    return _OTHER_NAME if REFERENCE_FUNCTION in _module_definitions(tree) else REFERENCE_FUNCTION


_LITERALS = (int, float, bool, str, type(None))


@dataclass(frozen=True)
class RunnerSource:
    """The runner's text and tree, and where it sits in the checkout (for the header)."""

    text: str
    tree: ast.Module
    shown: str  # e.g. "triton2triton/vllm/triton_rms_norm/scripts/task_runner.py"


def write_reference(runner: RunnerSource, loop: TestLoop, cases: list[FollowedCase], fields: TaskFields) -> str:
    """The text of reference.py; NotImportable when the reference needs what it cannot be given."""
    statements, free = _slice(loop, fields)
    _check_no_draws(statements, runner.tree)
    bindings, local_imports = _bindings(free, loop, cases, fields, statements)
    given = {f.name for f in fields.inputs} | {s.param for s in fields.scalars}
    local = {name for node in local_imports for name in _stored(node)}
    module_parts = _module_parts(runner, free - set(bindings) - local - given)
    inputs = [field.name for field in fields.inputs]
    statements = [_on_inputs_device(node, inputs[0]) for node in statements]
    params = ", ".join(inputs + (["*"] + [s.param for s in fields.scalars] if fields.scalars else []))
    body = [ast.unparse(node) for node in local_imports]
    # a tensor the test gives in some cases only: None where the entry's flag says it is not given
    body += [f"{name} = {name} if {flag} else None" for name, flag in loop.optional if name in free | set(inputs)]
    body += [f"{name} = {value}" for name, value in bindings.items()]
    body += [ast.unparse(node) for node in statements]
    returned = []
    for comparison, output in zip(loop.comparisons, fields.outputs):
        dtype = _dtype_source(output, fields)
        value = f"({ast.unparse(comparison.reference)}).to(device={inputs[0]}.device, dtype={dtype})"
        if output.inplace and comparison.region is not None:  # the part the test compares; the rest as given
            part = ast.Subscript(ast.Name(output.name, ast.Load()), comparison.region, ast.Load())
            body.append(f"{ast.unparse(part)} = {value}")
        elif output.inplace:  # written into the input, as the kernel does
            body.append(f"{output.name}.copy_({value})")
        else:
            returned.append(value)
    if not returned:
        body.append("return None")
    elif len(returned) == 1:
        body.append(f"return {returned[0]}")
    else:  # a tuple in the order the kernel returns its outputs
        body.append("\n".join(["return (", *(f"    {value}," for value in returned), ")"]))
    lines = [
        f'"""Reference for {runner.shown.split("/scripts/")[0]}, written by `arena import aka`.',
        "",
        "The functions and constants below are copied unchanged from AgentKernelArena (Apache-2.0),",
        f"{runner.shown};",
        '`reference` repeats the statements its correctness test computes the reference with."""',
        "",
        *module_parts,
        f"def {reference_function(runner.tree)}({params}):",
        *("    " + line for text in body for line in text.splitlines()),
        "",
    ]
    return "\n".join(lines)


def _on_inputs_device(statement: ast.stmt, first_input: str) -> ast.stmt:
    """`statement` with each `device="cuda"` (or "cuda:N") keyword the inputs' device, where the
    harness put them (as for a name the test binds to "cuda", _constant_source)."""
    statement = copy.deepcopy(statement)
    for node in ast.walk(statement):
        for keyword in getattr(node, "keywords", []) if isinstance(node, ast.Call) else []:
            value = keyword.value
            if keyword.arg == "device" and isinstance(value, ast.Constant) and str(value.value).startswith("cuda"):
                keyword.value = ast.Attribute(ast.Name(first_input, ast.Load()), "device", ast.Load())
    return ast.fix_missing_locations(statement)


def _slice(loop: TestLoop, fields: TaskFields) -> tuple[list[ast.stmt], set[str]]:
    """The loop statements the compared references depend on, in order, and the names they
    (and the reference expressions) use without assigning them."""
    inputs = {field.name for field in fields.inputs}
    inputs |= {name for field in fields.inputs for name in field.copy_of + field.cast_of}  # bound from the input
    needed = {name for comparison in loop.comparisons for name in _loaded(comparison.reference)}
    needed |= {name for comparison in loop.comparisons if comparison.region for name in _loaded(comparison.region)}
    looked_up = {name for name, _, _ in loop.choices}  # the entry is given their index: bound from it
    chosen: list[ast.stmt] = []
    for statement in reversed(loop.statements):
        assigned = _stored(statement)
        if not isinstance(statement, (ast.Assign, ast.Import, ast.ImportFrom)):
            assigned = written_names(statement)  # a loop filling the reference writes into it
        if statement is loop.call or not assigned & needed or assigned <= inputs and not _after(statement, loop):
            continue  # the kernel call, an unused statement, or an input's draw (a parameter now)
        if assigned & needed & looked_up and assigned & needed <= inputs | looked_up and not _after(statement, loop):
            continue  # `..., activation, ... = TEST_CASES[i]`: what the reference needs of it, it is given
        if loop.written and _after(statement, loop):
            _check_not_read_after_the_kernel(statement, set(loop.written))
        chosen.insert(0, statement)
        needed = (needed - assigned) | _free(statement)
    return chosen, needed


_RANDOM = frozenset(("randn", "rand", "randint", "randperm", "randn_like", "rand_like", "randint_like", "normal"))


def _check_no_draws(statements: list[ast.stmt], tree: ast.Module) -> None:
    """NotImportable when a reference statement draws random values (itself, or through a function
    of the runner): arena gives the reference the inputs it drew, not a generator to draw again."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}

    def draws(node: ast.AST, seen: frozenset[str]) -> bool:
        for child in ast.walk(node):
            if not isinstance(child, ast.Call):
                continue
            name = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", "")
            if isinstance(child.func, ast.Attribute) and name in _RANDOM:
                return True
            if name in functions and name not in seen and draws(functions[name], seen | {name}):
                return True
        return False

    for statement in statements:
        if draws(statement, frozenset()):
            first = ast.unparse(statement).splitlines()[0][:70]
            raise ReferenceNotWritten(
                f"line {statement.lineno}: `{first}` draws random values for the reference; arena gives the "
                "reference the kernel's inputs"
            )


def _check_not_read_after_the_kernel(statement: ast.stmt, written: set[str]) -> None:
    """NotImportable when a reference statement after the call reads the values of an argument the
    kernel wrote (the reference is given the input before the kernel runs); its shape, dtype and
    device are the same before and after."""
    metadata: set[int] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype", "device", "size", "numel"):
            metadata.add(id(node.value))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "").endswith("_like") and node.args:
            metadata.add(id(node.args[0]))
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.Name)
            and node.id in written
            and isinstance(node.ctx, ast.Load)
            and id(node) not in metadata
        ):
            raise ReferenceNotWritten(
                f"line {statement.lineno}: the reference reads {node.id!r} after the kernel wrote into it"
            )


def _bindings(
    free: set[str], loop: TestLoop, cases: list[FollowedCase], fields: TaskFields, statements: list[ast.stmt]
) -> tuple[dict[str, str], list[ast.stmt]]:
    """Source for each free name the function must bind, and the test's local imports it needs."""
    inputs = [field.name for field in fields.inputs]
    by_test_name = {s.test_name: s.param for s in fields.scalars if s.test_name}
    params = {s.param for s in fields.scalars}
    from_shapes = {
        dim: f"{field.name}.shape[{axis}]"
        for field in reversed(fields.inputs)
        for axis, dim in enumerate(field.shape)
        if isinstance(dim, str)
    }
    imports = {
        name: node
        for node in loop.setup + loop.statements
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in _stored(node)
    }
    copies = {name: field.name for field in fields.inputs for name in field.copy_of}
    literals = {field.literal_of: field.name for field in fields.inputs if field.literal_of}
    bindings: dict[str, str] = {}
    local_imports: list[ast.stmt] = []
    choices = {test_name: (param, values) for test_name, param, values in loop.choices}
    for name in sorted(free):
        if name in choices:  # the entry is given its index among the cases' values: the value again
            bindings[name] = f"{choices[name][1]!r}[{choices[name][0]}]"
            continue
        if name in inputs or (name in params and name not in by_test_name):
            continue
        cast = next((field.name for field in fields.inputs if name in field.cast_of), None)
        if cast is not None:
            raise ReferenceNotWritten(f"the reference reads {name!r}, whose cast the kernel is given as {cast!r}")
        if name in copies:  # the test drew `name` and gave the kernel a copy of it: the same values
            bindings[name] = f"{copies[name]}.clone()"
            continue
        if name in literals:  # the kernel is given torch.tensor(name, dtype=<int>): the same integers
            bindings[name] = f"{literals[name]}.tolist()"
            continue
        if name in loop.result_names:
            bindings[name] = _output_stand_in(name, loop, fields, statements, from_shapes)
            continue
        if name == loop.module_name:
            raise ReferenceNotWritten("the reference calls the kernel module")
        if name in imports:
            if imports[name] not in local_imports:
                local_imports.append(imports[name])
        elif name in by_test_name:
            if by_test_name[name] != name:
                bindings[name] = by_test_name[name]
        elif name in from_shapes:
            bindings[name] = from_shapes[name]
        elif name in cases[0].scope.names:
            quotient = _quotient_of_axes(name, loop, cases, fields, from_shapes)
            bindings[name] = quotient or _constant_source(name, cases, inputs[0], fields)
    return bindings, local_imports


def _quotient_of_axes(
    name: str, loop: TestLoop, cases: list[FollowedCase], fields: TaskFields, from_shapes: dict[str, str]
) -> str | None:
    """A dim no input's shape carries that the test divides an axis by to size another (`num_groups
    = K // group_size`, `scales` drawn with num_groups rows), dividing it exactly in every case, or
    multiplies an axis by to make a dim the reference is given (`num_tokens = batch * qlen`, the
    kernel given num_tokens; or `total = sum(counts)` of `counts = [qlen] * batch`): the quotient
    as source, `qweight.shape[0] // scales.shape[0]`, `num_tokens // idx_mapping.shape[0]`; None
    otherwise."""
    divisors = [v for v in (case.scope.names.get(name) for case in cases) if type(v) is int and v > 0]
    if name not in fields.dim_names or len(divisors) != len(cases):
        return None
    known = dict(from_shapes)  # a dim as the reference can read it: an input's axis, a dim scalar
    for scalar in fields.scalars:
        if scalar.test_name and isinstance(scalar.value, str):
            known.setdefault(scalar.test_name, scalar.param)

    def values(dim: str) -> list[Any]:
        return [case.scope.names.get(dim) for case in cases]

    assignments = [
        (statement.targets[0].id, statement.value)
        for node in loop.setup + loop.statements
        for statement in ast.walk(node)
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ]
    repeated = dict(filter(None, (_repeated_list(target, value) for target, value in assignments)))
    for target, value in assignments:
        factors = _names(value) if isinstance(value, ast.BinOp) else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv) and factors is not None:
            left, right = factors
            # quotient = whole // name, dividing exactly: name == whole // quotient
            divides = all(type(a) is int and a % v == 0 for a, v in zip(values(left), divisors))
            if right == name and {target, left} <= set(from_shapes) and divides:
                return f"{from_shapes[left]} // {from_shapes[target]}"
            continue
        product = factors if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) else None
        summed = _summed_list(value, repeated)  # sum([name] * other) is other * name: checked in every case
        factors = product or summed
        if factors is None or name not in factors or factors[0] == factors[1]:
            continue
        # product = other * name: name == product // other
        other = factors[1] if factors[0] == name else factors[0]
        exact = product or all(t == b * v for t, b, v in zip(values(target), values(other), divisors))
        if target in known and other in known and all(type(b) is int and b > 0 for b in values(other)) and exact:
            return f"{known[target]} // {known[other]}"
    return None


def _names(value: ast.BinOp) -> tuple[str, str] | None:
    """`a * b`, `a // b`: ("a", "b") where both sides are names."""
    if isinstance(value.left, ast.Name) and isinstance(value.right, ast.Name):
        return value.left.id, value.right.id
    return None


def _repeated_list(target: str, value: ast.expr) -> tuple[str, tuple[str, str]] | None:
    """`counts = [c] * n` (or `n * [c]`): ("counts", ("c", "n")); None for anything else."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    for shown, count in ((value.left, value.right), (value.right, value.left)):
        if (
            isinstance(shown, ast.List)
            and len(shown.elts) == 1
            and isinstance(shown.elts[0], ast.Name)
            and isinstance(count, ast.Name)
        ):
            return target, (shown.elts[0].id, count.id)
    return None


def _summed_list(value: ast.expr, repeated: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """`sum(counts)` of a list bound to `[c] * n`: its element's and its count's names."""
    if is_call_with_one_argument(value, "sum") and not value.keywords and isinstance(value.args[0], ast.Name):
        return repeated.get(value.args[0].id)
    return None


_LIKE = frozenset(f"torch.{kind}_like" for kind in ("zeros", "ones", "empty", "full"))


def _output_stand_in(
    name: str, loop: TestLoop, fields: TaskFields, statements: list[ast.stmt], from_shapes: dict[str, str]
) -> str:
    """`ref = torch.zeros_like(result)` reads only the output's shape, dtype and device: an empty
    tensor of the declared output's, as source. NotImportable where the reference reads more of
    it, or where a dim of its shape is no input's."""
    refused = ReferenceNotWritten("the reference is computed from the kernel's output")
    calls = [n for node in statements for n in ast.walk(node) if isinstance(n, ast.Call) and _like_of(n, name)]
    shaped = {id(call.args[0]) for call in calls}
    uses = [n for node in statements for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
    if loop.writes or not uses or any(id(use) not in shaped for use in uses):
        raise refused
    output = dict(zip(loop.result_names, fields.outputs))[name]
    sizes = [str(dim) if isinstance(dim, int) else from_shapes.get(dim, "") for dim in output.shape]
    if not all(sizes):
        raise refused
    shape = f"({', '.join(sizes)},)" if len(sizes) == 1 else f"({', '.join(sizes)})"
    return f"torch.empty({shape}, dtype={_dtype_source(output, fields)}, device={fields.inputs[0].name}.device)"


def _dtype_source(output: TensorField, fields: TaskFields) -> str:
    """The output's dtype as source: `torch.float16`; for a `$dtype` output, the dtype of the first
    `$dtype` input (the case's dtype, which the reference is not given otherwise)."""
    if output.dtype != CASE_DTYPE:
        return f"torch.{output.dtype}"
    carrier = next((field.name for field in fields.inputs if field.dtype == CASE_DTYPE), None)
    if carrier is None:
        raise ReferenceNotWritten(f"output {output.name!r} has a dtype that differs between cases, and no input's does")
    return f"{carrier}.dtype"


def _like_of(node: ast.Call, name: str) -> bool:
    return (
        ast.unparse(node.func) in _LIKE
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == name
    )


def _constant_source(name: str, cases: list[FollowedCase], first_input: str, fields: TaskFields) -> str:
    """A name the test binds to one value in every case, as source: a literal, a dtype, or the
    inputs' device for the test's "cuda"."""
    values = [case.scope.names.get(name) for case in cases]
    value = values[0]
    unknown = next((v for v in values if isinstance(v, Unknown)), None)
    if unknown is not None:
        raise ReferenceNotWritten(f"the reference uses {name!r}, which cannot be read: {unknown.reason}")
    if not all(same_value(v, value) for v in values):
        what = "a dim no input's shape carries" if name in fields.dim_names else "a value that differs between cases"
        raise ReferenceNotWritten(f"the reference uses {name!r}, {what}, and the kernel is not given it")
    if isinstance(value, str) and value.startswith("cuda"):
        return f"{first_input}.device"  # the test's device: where the harness put the inputs
    if isinstance(value, DType):
        return f"torch.{value.name}"
    if isinstance(value, _LITERALS) or (
        isinstance(value, (tuple, list)) and all(isinstance(v, _LITERALS) for v in value)
    ):
        return repr(value)  # a list too (`mrope_section = [16, 8, 8]`): a new one each call
    raise ReferenceNotWritten(f"the reference uses {name!r}, which the importer cannot write as a literal")


def _module_parts(runner: RunnerSource, names: set[str]) -> list[str]:
    """The runner's imports, functions and constants the reference needs (transitively), as text
    in the runner's order; `import torch` always (the result is cast with it)."""
    definitions, imported = _module_definitions(runner.tree), _imported(runner.tree)
    for name in sorted(names - {"torch"}):
        if name not in definitions and name not in imported and not hasattr(builtins, name):
            raise ReferenceNotWritten(f"the reference uses {name!r}, which the test does not define")
    wanted: set[str] = set()
    used = set(names)
    pending = [name for name in names if name in definitions]
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        wanted.add(name)
        node = definitions[name]
        if isinstance(node, ast.Assign) and not _is_literal(node.value):
            raise ReferenceNotWritten(
                f"the reference needs {name} = `{ast.unparse(node.value)[:60]}` from the runner, computed when it loads"
            )
        loaded = _loaded(node)
        used |= loaded
        pending += [n for n in loaded if n in definitions and n not in wanted]
    imports = [n for n in runner.tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and _stored(n) & used]
    parts = [ast.unparse(node) for node in imports]
    if not any("torch" in _stored(node) for node in imports):
        parts.insert(0, "import torch")
    copied = {id(definitions[name]) for name in wanted}
    for node in runner.tree.body:
        if id(node) in copied:
            gap = ["", ""] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []
            parts += gap + [_source_of(runner.text, node)]
    return parts + ["", ""]


def _module_definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    definitions: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, ast.Assign):
            definitions.update({name: node for name in _stored(node)})
    return definitions


def _imported(tree: ast.Module) -> set[str]:
    return {name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) for name in _stored(node)}


def _source_of(text: str, node: ast.stmt) -> str:
    """The node's own lines of the runner, decorators included: copied, not re-written."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno] + [d.lineno for d in decorators])
    return "\n".join(text.splitlines()[first - 1 : node.end_lineno])


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return isinstance(node, ast.Attribute) and ast.unparse(node).startswith("torch.")
    return True


def _after(statement: ast.stmt, loop: TestLoop) -> bool:
    """Whether `statement` comes after the kernel call in the loop."""
    order: Mapping[int, int] = {id(node): index for index, node in enumerate(loop.statements)}
    return order[id(statement)] > order[id(loop.call)]


def _free(statement: ast.stmt) -> set[str]:
    """The names a statement reads before it binds them: a loop's own variable and the names its
    body assigns before reading them are not needed from outside it."""
    if not isinstance(statement, (ast.For, ast.While, ast.If, ast.With)):
        return _loaded(statement)
    free: set[str] = set()
    bound: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.For):
                free.update(_loaded(node.iter) - bound)
                bound.update(_stored(node.target))
                walk(node.body + node.orelse)
            elif isinstance(node, (ast.While, ast.If)):
                free.update(_loaded(node.test) - bound)
                walk(node.body + node.orelse)
            elif isinstance(node, ast.With):
                for item in node.items:
                    free.update(_loaded(item.context_expr) - bound)
                    if item.optional_vars is not None:
                        bound.update(_stored(item.optional_vars))
                walk(node.body)
            else:
                free.update(_loaded(node) - bound)
                bound.update(name for name in _stored(node) if not isinstance(node, ast.AugAssign))

    walk([statement])
    return free


def _loaded(node: ast.AST) -> set[str]:
    """Names a node reads, less those a function inside it binds as parameters or locals."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            names.add(child.id)
    if isinstance(node, (ast.FunctionDef, ast.Lambda)):
        spec = node.args
        names -= {a.arg for a in spec.posonlyargs + spec.args + spec.kwonlyargs}
        names -= {a.arg for a in (spec.vararg, spec.kwarg) if a is not None}
        names -= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _stored(node: ast.AST) -> set[str]:
    """Names a statement binds at its own level (targets and imports)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
