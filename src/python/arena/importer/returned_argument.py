"""A kernel function that writes into its tensor argument and returns that same argument
(`out = wrapper(z)` after `return Z_tensor`, rocmbench's `test_kernel_dot`), read as the call
that writes its argument in place.

The test compares `out`, which is the argument's own storage: what it checks is the argument as
the kernel leaves it. Arena's harness refuses an output whose storage is an input's, so the task
declares the argument written in place and the return ignored (`-> ignored`, docs/task-format.md),
which is what the test compares. Only where every `return` of the function returns bare tensor
parameters the body never rebinds, each passed by the test as a plain name: a view (`dst[:n]`)
is part of the argument.

Where it returns such an argument beside new tensors (`return num_sampled, num_rejected`, vLLM's
`triton_get_num_sampled_and_rejected`, `num_sampled` written in place), the argument is read the
same way, and the new tensors are its returned outputs: the importer appends to the copy of the
kernel file a function (the entry) that takes what the kernel function takes, calls it and returns
only the new tensors, since arena's entry returns the outputs it does not write in place. Appended,
not beside it: it calls the kernel function as a name of its own module, so no import can find
another file (a kernel file in `source/` is not on the path its entry is imported from).
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from arena.importer.correctness import Comparison, TestLoop, result_names
from arena.importer.launch import Adapter, top_level_names
from arena.importer.outcome import KernelCallNotRead


def as_written_in_place(
    loop: TestLoop, function: ast.FunctionDef, kernel_file: str, kernel_tree: ast.Module
) -> TestLoop:
    """`loop` with `out = mod.fn(z, ...)` read as `mod.fn(z, ...)` writing z, `out` read as z,
    where fn returns its parameters as above (and `out, new = mod.fn(z, ...)` as `new =
    mod.fn_outputs(z, ...)` writing z, through the function written beside it); `loop` unchanged
    otherwise."""
    if not isinstance(loop.call, ast.Assign) or loop.adapter is not None:
        return loop
    returned = _returned_elements(function)
    names = result_names(loop.call)
    if returned is None or not any(returned) or len(names) != len(returned):
        return loop
    call = loop.kernel_call
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    given = {params[i]: arg for i, arg in enumerate(call.args) if i < len(params)}
    given |= {k.arg: k.value for k in call.keywords if k.arg}
    renamed: dict[str, str] = {}
    for name, param in zip(names, returned):
        argument = given.get(param) if param else None
        if param and not isinstance(argument, ast.Name):
            return loop
        if isinstance(argument, ast.Name):
            renamed[name] = argument.id
    if any(isinstance(arg, ast.Starred) for arg in call.args) or len(set(renamed.values())) != len(renamed):
        return loop
    new = [name for name, param in zip(names, returned) if param is None]
    kept = [k for k, param in enumerate(returned) if param is None]
    comment = _NEW_TENSORS.format(fn=function.name)
    adapter = outputs_adapter(function, kept, kernel_file, kernel_tree, comment) if new else None
    if adapter is None:
        statement: ast.Assign | ast.Expr = ast.copy_location(ast.Expr(call), loop.call)
    else:
        target = ast.Name(new[0], ast.Store()) if len(new) == 1 else ast.Tuple([ast.Name(n, ast.Store()) for n in new])
        module = call.func.value  # type: ignore[attr-defined]
        value = ast.Call(ast.Attribute(module, adapter.function.name, ast.Load()), call.args, call.keywords)
        statement = ast.fix_missing_locations(
            ast.copy_location(ast.Assign([target], ast.copy_location(value, call)), loop.call)
        )
    at = loop.statements.index(loop.call)
    after = [_renamed(node, renamed) for node in loop.statements[at + 1 :]]
    # `return dst[:n]` compared with `ref`: the rows of dst the test compares, ref's (written_region)
    viewed = {names[position] for position in _prefixes(function)}
    comparisons = tuple(
        dataclasses.replace(
            c,
            output=renamed.get(c.output, c.output),
            reference=_renamed(c.reference, renamed),
            region=_leading_rows(c.reference, renamed) if c.output in viewed else c.region,
        )
        for c in loop.comparisons
    )
    statements = (*loop.statements[:at], statement, *after)
    return dataclasses.replace(
        loop, statements=statements, call=statement, comparisons=_ordered(comparisons, call, new), adapter=adapter
    )


def _returned_elements(function: ast.FunctionDef) -> list[str | None] | None:
    """Per element every `return` returns: the parameter it is (bare, or its leading rows
    `param[:n]`, _prefix_of), a name the body never rebinds, the same in every return, or None (a
    new tensor); None when the returns disagree."""
    params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    rebound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    found: list[str | None] | None = None
    for node in returns_of(function.body):
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value] if node.value else []
        elements = [_prefix_of(v) or v for v in values]
        names = [v.id if isinstance(v, ast.Name) and v.id in params and v.id not in rebound else None for v in elements]
        if not values or (found is not None and names != found):
            return None
        found = names
    return found


def _prefix_of(node: ast.expr) -> ast.Name | None:
    """`dst` for `dst[:n]` (its leading rows: one slice from 0, no step); None otherwise."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Slice):
        cut = node.slice
        if cut.lower is None and cut.step is None and cut.upper is not None:
            return node.value
    return None


def _prefixes(function: ast.FunctionDef) -> set[int]:
    """The positions at which `function`'s returns give the leading rows of a parameter."""
    prefixes: set[int] = set()
    for node in returns_of(function.body):
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value] if node.value else []
        prefixes |= {position for position, value in enumerate(values) if _prefix_of(value) is not None}
    return prefixes


def _leading_rows(reference: ast.expr, renamed: dict[str, str]) -> ast.Slice:
    """`:ref.shape[0]`: the rows of the argument the test compares with `ref`, where the kernel
    returns a prefix of the argument and the test compares that prefix whole (of ref's shape)."""
    shape = ast.Attribute(_renamed(reference, renamed), "shape", ast.Load())  # type: ignore[arg-type]
    rows = ast.Subscript(shape, ast.Constant(0), ast.Load())
    return ast.fix_missing_locations(ast.Slice(None, rows, None))


def outputs_adapter(
    function: ast.FunctionDef, kept: list[int], kernel_file: str, kernel_tree: ast.Module, comment: str
) -> Adapter:
    """`def fn_outputs(<fn's parameters>): returned = fn(...); return returned[k], ...` for k in
    `kept`, appended to the kernel file's copy under `comment`."""
    spec = copy.deepcopy(function.args)
    passed: list[ast.expr] = [ast.Name(a.arg, ast.Load()) for a in spec.posonlyargs + spec.args]
    if spec.vararg is not None:
        passed.append(ast.Starred(ast.Name(spec.vararg.arg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(a.arg, ast.Name(a.arg, ast.Load())) for a in spec.kwonlyargs]
    if spec.kwarg is not None:
        keywords.append(ast.keyword(None, ast.Name(spec.kwarg.arg, ast.Load())))
    picked = [ast.Subscript(ast.Name("returned", ast.Load()), ast.Constant(k), ast.Load()) for k in kept]
    name = f"{function.name}_outputs"
    while name in top_level_names(kernel_tree):
        name = f"arena_{name}"
    adapter = ast.parse(f"def {name}():\n    pass\n").body[0]
    assert isinstance(adapter, ast.FunctionDef)
    adapter.args = spec
    call = ast.Call(ast.Name(function.name, ast.Load()), passed, keywords)
    adapter.body = [
        ast.Assign([ast.Name("returned", ast.Store())], call),
        ast.Return(picked[0] if len(picked) == 1 else ast.Tuple(picked, ast.Load())),
    ]
    adapter = ast.fix_missing_locations(ast.copy_location(adapter, function))
    return Adapter(file=kernel_file, function=adapter, text=f"\n\n{comment}\n{ast.unparse(adapter)}\n")


_NEW_TENSORS = (
    "# Appended by `arena import aka`: `{fn}`, returning only the new tensors (the argument\n"
    "# it also returns is written in place, which is what the test compares); the task's entry."
)


def returns_of(body: list[ast.stmt]) -> list[ast.Return]:
    """The function's own `return` statements (not those of functions it defines)."""
    found: list[ast.Return] = []
    for node in body:
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                found += returns_of([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)])
                found += [
                    r for h in getattr(node, field, []) if isinstance(h, ast.ExceptHandler) for r in returns_of(h.body)
                ]
    return found


def _renamed(node: ast.AST, renamed: dict[str, str]) -> ast.AST:  # type: ignore[misc]
    copied = copy.deepcopy(node)
    for child in ast.walk(copied):
        if isinstance(child, ast.Name) and child.id in renamed:
            child.id = renamed[child.id]
    return copied


def _ordered(comparisons: tuple[Comparison, ...], call: ast.Call, new: list[str]) -> tuple[Comparison, ...]:
    """The comparisons of the new tensors first, in their order, then those of the arguments
    written, in the call's order (the readers' order of outputs)."""
    order = new + [arg.id for arg in call.args if isinstance(arg, ast.Name)]
    return tuple(sorted(comparisons, key=lambda c: order.index(c.output) if c.output in order else len(order)))


def as_picked_outputs(
    loop: TestLoop, picked: tuple[int, ...], function: ast.FunctionDef, kernel_file: str, kernel_tree: ast.Module
) -> TestLoop:
    """`loop` calling `mod.<fn>_outputs`, appended to the kernel file's copy, which returns the
    elements `picked` of what fn returns; NotImportable where fn does not always return a tuple
    display of one length that holds them."""
    lengths = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else -1 for r in returns_of(function.body)}
    if len(lengths) != 1 or min(lengths) <= max(picked):
        raise KernelCallNotRead(
            f"the test keeps element(s) {', '.join(map(str, picked))} of what `{function.name}` returns, "
            "which does not always return a tuple display of one length"
        )
    adapter = outputs_adapter(function, list(picked), kernel_file, kernel_tree, _COMMENT.format(fn=function.name))
    call = loop.kernel_call
    module = call.func.value  # type: ignore[attr-defined]
    value = ast.copy_location(
        ast.Call(ast.Attribute(module, adapter.function.name, ast.Load()), call.args, call.keywords), call
    )
    statement = copy.copy(loop.call)
    statement.value = value
    statement = ast.fix_missing_locations(statement)
    statements = tuple(statement if node is loop.call else node for node in loop.statements)
    return dataclasses.replace(loop, statements=statements, call=statement, adapter=adapter)


_COMMENT = (
    "# Appended by `arena import aka`: `{fn}`, returning only what the test compares of the tuple it\n"
    "# returns (the test never reads the rest); the task's entry."
)
