"""A kernel function the test gives a list of numbers or a torch dtype (vLLM's
`mod.w8a8_block_int8_matmul(A, B, As, Bs, [block_n, block_k], output_dtype=torch.float16)`), read
through a function that takes the list's elements as separate arguments and passes the dtype as
the test does.

Arena's scalars are numbers, dims and flags: neither a list nor a dtype is one. The importer
appends to the copy of the kernel file (as it appends `<fn>_outputs`, arena.importer.returned_argument)
a function, the task's entry, that takes what the test passes less those arguments, each list's
elements in its place (`block_size_0, block_size_1`), and calls the kernel function with the list
built again from them and the dtype written as the test writes it:

    def w8a8_block_int8_matmul_scalars(A, B, As, Bs, block_size_0, block_size_1):
        return w8a8_block_int8_matmul(A, B, As, Bs, [block_size_0, block_size_1], output_dtype=torch.float16)

The test's call becomes a call of that function with the elements' own expressions, so each
element is read as any other scalar (a number the same in every case, a dim, a case value) and
refused as any other where it is not one. Only what is read exactly: a list or tuple display
without `*`; a name the case loop unpacks from TEST_SHAPES that is a list (or a tuple) of numbers
of one length in every case (vLLM's `triton_mrope`: `mrope_section`, read as `mrope_section[0]`,
...; the reference, which reads the list itself, binds it as a literal where it is one value in
every case and is refused otherwise); and a dtype written `torch.<dtype>` (one value in every
case). A dtype held by a name, a list held by any other name, and a kernel file that does not
bind `torch` at its top leave the call as it is (and its reading refuses it, with the reason).
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from arena.importer.correctness import TestLoop
from arena.importer.launch import Adapter, top_level_names
from arena.importer.values import DTYPE_ALIASES, DTYPE_NAMES


def as_separate_scalars(
    loop: TestLoop, function: ast.FunctionDef, kernel_file: str, kernel_tree: ast.Module
) -> TestLoop:
    """`loop` whose kernel call passes its list and dtype arguments through an appended function
    (above), that function its adapter; `loop` unchanged where there are none, where it has an
    adapter already, or where what it passes is not read exactly."""
    if loop.adapter is not None or not isinstance(loop.call, (ast.Assign, ast.Expr)):
        return loop
    call = loop.kernel_call
    if not isinstance(call.func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
        return loop
    if any(k.arg is None for k in call.keywords) or not _binds_torch(kernel_tree):
        return loop
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    if len(call.args) > len(params):
        return loop
    arguments = [(params[i], arg, False) for i, arg in enumerate(call.args)]
    arguments += [(str(k.arg), k.value, True) for k in call.keywords]
    spread = {id(node): _listed(node) or _per_case(node, loop) for _, node, _ in arguments}
    if not any(spread[id(node)] is not None or _dtype(node) is not None for _, node, _ in arguments):
        return loop
    taken = set(params) | {a.arg for a in function.args.kwonlyargs}
    positional: list[str] = []  # the appended function's parameters, then what the test passes them
    keyword_only: list[str] = []
    given_args: list[ast.expr] = []
    given_keywords: list[ast.keyword] = []
    passed_args: list[ast.expr] = []
    passed_keywords: list[ast.keyword] = []
    for param, node, by_keyword in arguments:
        listed, dtype = spread[id(node)], _dtype(node)
        if dtype is not None:
            passed: ast.expr = _torch_dtype(dtype)
            names: list[str] = []
            values: list[ast.expr] = []
        elif listed is not None:
            kind, values = listed
            names = [f"{param}_{j}" for j in range(len(values))]
            if any(name in taken for name in names):
                return loop
            taken |= set(names)
            passed = kind([ast.Name(name, ast.Load()) for name in names], ast.Load())
        else:
            names, values, passed = [param], [node], ast.Name(param, ast.Load())
        if by_keyword:
            keyword_only += names
            given_keywords += [ast.keyword(name, value) for name, value in zip(names, values)]
            passed_keywords.append(ast.keyword(param, passed))
        else:
            positional += names
            given_args += values
            passed_args.append(passed)
    adapter = _adapter(function, kernel_file, kernel_tree, positional, keyword_only, passed_args, passed_keywords)
    called = ast.Attribute(call.func.value, adapter.function.name, ast.Load())  # `mod.<fn>_scalars`
    value = ast.copy_location(ast.Call(called, given_args, given_keywords), call)
    statement: ast.Assign | ast.Expr = copy.copy(loop.call)
    statement.value = value
    statement = ast.fix_missing_locations(statement)
    statements = tuple(statement if node is loop.call else node for node in loop.statements)
    return dataclasses.replace(loop, statements=statements, call=statement, adapter=adapter)


Listed = tuple[type[ast.List] | type[ast.Tuple], list[ast.expr]]  # the display's kind, and its elements


def _listed(node: ast.expr) -> Listed | None:
    """The elements of a list or tuple display without `*`; None for anything else."""
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and not any(isinstance(e, ast.Starred) for e in node.elts):
        return type(node), list(node.elts)
    return None


def _per_case(node: ast.expr, loop: TestLoop) -> Listed | None:
    """`name[0], name[1], ...` for a name the case loop unpacks from each TEST_SHAPES value
    (`for i, (..., mrope_section) in enumerate(TEST_SHAPES)`) where it is a list (or a tuple) of
    numbers of one length in every case, and which nothing in the loop binds again; None otherwise."""
    if not isinstance(node, ast.Name) or not loop.shapes:
        return None
    values = [_unpacked(loop.target, shape, node.id) for shape in loop.shapes]
    sequences = [value for value in values if isinstance(value, (list, tuple))]
    kinds = {type(value) for value in sequences}
    if len(sequences) != len(values) or len(kinds) != 1 or len({len(value) for value in sequences}) != 1:
        return None
    numbers = all(isinstance(e, (int, float)) and not isinstance(e, bool) for value in sequences for e in value)
    stored = {
        n.id
        for s in (*loop.setup, *loop.statements)
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    if not numbers or not sequences[0] or node.id in stored:
        return None
    kind: type[ast.List] | type[ast.Tuple] = ast.List if kinds == {list} else ast.Tuple
    return kind, [
        ast.Subscript(ast.Name(node.id, ast.Load()), ast.Constant(j), ast.Load()) for j in range(len(sequences[0]))
    ]


def _unpacked(target: ast.expr, value: object, name: str) -> object:
    """What unpacking `value` into `target` binds to `name` (None where it binds nothing or
    where the value does not unpack so)."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (tuple, list))
        and len(value) == len(target.elts)
    ):
        found = [_unpacked(t, v, name) for t, v in zip(target.elts, value)]
        return next((f for f in found if f is not None), None)
    return None


def _dtype(node: ast.expr) -> str | None:
    """The attribute name of `torch.<dtype>` (`float16`, `half`); None for anything else."""
    torch = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch"
    if torch and isinstance(node, ast.Attribute) and (node.attr in DTYPE_NAMES or node.attr in DTYPE_ALIASES):
        return node.attr
    return None


def _torch_dtype(name: str) -> ast.expr:
    return ast.Attribute(ast.Name("torch", ast.Load()), name, ast.Load())


def _binds_torch(tree: ast.Module) -> bool:
    """Whether the kernel file's top binds `torch` to torch itself (`import torch`) and to nothing
    else, which the appended function's `torch.<dtype>` reads."""
    plain = False
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == "torch" and alias.name != "torch":  # `import numpy as torch`
                    return False
                plain = plain or (alias.asname is None and alias.name.split(".")[0] == "torch")
        elif "torch" in top_level_names(ast.Module(body=[node], type_ignores=[])):
            return False
    return plain


def _adapter(
    function: ast.FunctionDef,
    kernel_file: str,
    kernel_tree: ast.Module,
    positional: list[str],
    keyword_only: list[str],
    passed_args: list[ast.expr],
    passed_keywords: list[ast.keyword],
) -> Adapter:
    name = f"{function.name}_scalars"
    while name in top_level_names(kernel_tree):
        name = f"arena_{name}"
    adapter = ast.parse(f"def {name}():\n    pass\n").body[0]
    assert isinstance(adapter, ast.FunctionDef)
    adapter.args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in positional],
        vararg=None,
        kwonlyargs=[ast.arg(p) for p in keyword_only],
        kw_defaults=[None] * len(keyword_only),
        kwarg=None,
        defaults=[],
    )
    adapter.body = [ast.Return(ast.Call(ast.Name(function.name, ast.Load()), passed_args, passed_keywords))]
    adapter = ast.fix_missing_locations(ast.copy_location(adapter, function))
    comment = (
        f"# Appended by `arena import aka`: `{function.name}` given a list's elements as separate numbers\n"
        "# and the test's dtype as the test writes it (arena's scalars are numbers); the task's entry."
    )
    return Adapter(file=kernel_file, function=adapter, text=f"\n\n{comment}\n{ast.unparse(adapter)}\n")
