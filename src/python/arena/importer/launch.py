"""A test that launches its `@triton.jit` kernel itself (`add_kernel[grid](x, y, out, n, BLOCK=b)`),
made into a function arena can call: the launch (rocmbench's pytest files).

The launch, and the statements before it that only the launch reads (the grid, `grid = lambda
META: ...`, a `num_stages` it is given), become the body of a function the importer writes beside
the kernel file (the adapter, `arena_launch.py`): its parameters are the test's names they read,
the tensors first (inputs, and the buffers the kernel writes, which the test compares) and the
rest by keyword (dims, case values); the kernel file's names they read are imported from it. The
test then calls that function where it launched, so the readers see an ordinary kernel call that
writes into its arguments. The launch is the test's own, statement for statement; what it is given
is what the test gives it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import symtable
from dataclasses import dataclass
from pathlib import PurePosixPath

from arena.importer.outcome import LaunchNotWritten

ADAPTER_FILE = "arena_launch.py"


@dataclass(frozen=True)
class Adapter:
    """A function the importer writes (around a test's launch; around a kernel function whose
    return holds an argument it writes), and its file's text."""

    file: str  # beside the kernel file, or the kernel file itself: the text is appended to its copy
    function: ast.FunctionDef
    text: str


def wrap_launch(
    body: list[ast.stmt],
    kernel: str,
    module: str,
    kernel_file: str,
    kernel_tree: ast.Module,
    parameters: set[str],
    test: str,
) -> tuple[list[ast.stmt], Adapter]:
    """`body` (the test's statements) with the launch of `kernel` replaced by a call of the adapter
    on the kernel module `module`, and the adapter. `parameters` are the test's own parameters
    (case values, never tensors)."""
    launches = [i for i, node in enumerate(body) if _launch_of(node) == kernel]
    nested = [n for n in body if _launch_of(n) != kernel and kernel in launched(n)]
    if nested:
        first = ast.unparse(nested[0]).splitlines()[0][:60]
        raise LaunchNotWritten(
            f"`{test}` launches `{kernel}[grid](...)` inside `{first}`; the importer wraps one launch"
        )
    if len(launches) != 1:
        raise LaunchNotWritten(f"`{test}` launches `{kernel}[grid](...)` {len(launches)} times; the importer wraps one")
    at = launches[0]
    moved = _moved(body, at)
    adapter_body = [body[i] for i in sorted(moved)] + [body[at]]
    free = free_names(adapter_body)
    local = _bound_before(body[:at]) | parameters
    top = top_level_names(kernel_tree)
    missing = sorted(name for name in free if name not in local and name not in top and not hasattr(builtins, name))
    if missing:
        raise LaunchNotWritten(
            f"the launch of `{kernel}` reads {missing[0]!r}, which neither the test nor {kernel_file} binds"
        )
    params = [name for name in _in_order(adapter_body) if name in free and name in local]
    tensors = _tensor_names(body[:at], parameters)
    positional = [name for name in params if name in tensors]
    by_keyword = [name for name in params if name not in tensors]
    name = _adapter_name(kernel, top, local)
    function = _function(name, positional, by_keyword, adapter_body)
    imports = kernel_imports(
        sorted(name for name in free if name not in local and name in top), kernel_tree, kernel_file
    )
    text = _text(kernel, kernel_file, test, body[at].lineno, imports, function)
    call = ast.Expr(
        ast.Call(
            func=ast.Attribute(ast.Name(module, ast.Load()), name, ast.Load()),
            args=[ast.Name(p, ast.Load()) for p in positional],
            keywords=[ast.keyword(arg=p, value=ast.Name(p, ast.Load())) for p in by_keyword],
        )
    )
    ast.fix_missing_locations(ast.copy_location(call, body[at]))
    ast.copy_location(call.value, body[at])
    rewritten = [call if i == at else node for i, node in enumerate(body) if i not in moved]
    return rewritten, Adapter(file=beside(kernel_file), function=function, text=text)


def launched(node: ast.AST) -> set[str]:
    """Names launched as `kernel[grid](...)` inside `node`."""
    return {
        child.func.value.id
        for child in ast.walk(node)
        if isinstance(child, ast.Call)
        and isinstance(child.func, ast.Subscript)
        and isinstance(child.func.value, ast.Name)
    }


def _launch_of(node: ast.stmt) -> str | None:
    """The kernel a statement `kernel[grid](...)` launches, else None."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
            return func.value.id
    return None


def _moved(body: list[ast.stmt], at: int) -> set[int]:
    """The statements before the launch that bind only names the launch (or another of these)
    reads and nothing else in the test does: the grid and launch options."""
    moved: set[int] = set()
    needed = _reads(body[at])
    for index in range(at - 1, -1, -1):
        node = body[index]
        bound = _binds(node)
        if not bound or not bound <= needed:
            continue
        others = [n for i, n in enumerate(body) if i != index and i != at and i not in moved]
        if any(bound & _reads(other) for other in others) or any(bound & _binds(other) for other in others):
            continue
        moved.add(index)
        needed |= _reads(node)
    return moved


def _binds(node: ast.stmt) -> set[str]:
    """The names a plain assignment or a function definition binds; empty for anything else."""
    if isinstance(node, ast.FunctionDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        names = set()
        for target in node.targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if not all(isinstance(e, ast.Name) for e in elements):
                return set()
            names |= {e.id for e in elements}  # type: ignore[attr-defined]
        return names
    return set()


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def free_names(statements: list[ast.stmt]) -> set[str]:
    """The names the statements read that they do not bind themselves (nested functions and
    lambdas included), by Python's own symbol table."""
    source = "def _f():\n" + "\n".join("    " + line for s in statements for line in ast.unparse(s).splitlines())
    table = symtable.symtable(source, "<launch>", "exec").get_children()[0]
    free: set[str] = set()
    pending = [table]
    while pending:
        current = pending.pop()
        free |= {s.get_name() for s in current.get_symbols() if s.is_global() and s.is_referenced()}
        pending += current.get_children()
    return free


def _bound_before(statements: list[ast.stmt]) -> set[str]:
    bound: set[str] = set()
    for node in statements:
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                bound.add(child.id)
            elif isinstance(child, ast.FunctionDef):
                bound.add(child.name)
    return bound


def top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _in_order(statements: list[ast.stmt]) -> list[str]:
    """The names read, each once, in the order of the source."""
    nodes = [n for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    order: list[str] = []
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        if node.id not in order:
            order.append(node.id)
    return order


def _tensor_names(statements: list[ast.stmt], parameters: set[str]) -> set[str]:
    """The names the test last binds to a tensor: a torch call, or a method, attribute or element
    of one (`torch.randn(...)`, `torch.empty(...).normal_(...)`, `b.T`, `x.clone()`)."""
    tensors: set[str] = set()
    for node in statements:
        if not isinstance(node, ast.Assign):
            continue
        is_tensor = _tensor_valued(node.value, tensors)
        for target in node.targets:
            if isinstance(target, ast.Name):
                (tensors.add if is_tensor else tensors.discard)(target.id)
    return tensors - parameters


def _tensor_valued(node: ast.expr, tensors: set[str]) -> bool:
    if isinstance(node, ast.BinOp):  # `torch.randn(...) * scale`
        return _tensor_valued(node.left, tensors) or _tensor_valued(node.right, tensors)
    if isinstance(node, ast.UnaryOp):
        return _tensor_valued(node.operand, tensors)
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and (node.id == "torch" or node.id in tensors)


def _adapter_name(kernel: str, *taken: set[str]) -> str:
    name = f"{kernel}_launch"
    while any(name in names for names in taken):
        name = f"arena_{name}"
    return name


def _function(name: str, positional: list[str], by_keyword: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
    """`def name(t, ..., *, s, ...):` around `body` (parsed, so every Python version's fields are set)."""
    params = ", ".join(positional + (["*", *by_keyword] if by_keyword else []))
    function = ast.parse(f"def {name}({params}):\n    pass\n").body[0]
    assert isinstance(function, ast.FunctionDef)
    function.body = copy.deepcopy(body)
    ast.copy_location(function, body[-1])
    return ast.fix_missing_locations(function)


def kernel_imports(names: list[str], tree: ast.Module, kernel_file: str) -> list[str]:
    """How the adapter gets the kernel file's names: its own import statements for the modules it
    imports (`import triton`), `from <kernel file> import name` for what it defines."""
    lines: list[str] = []
    own = PurePosixPath(kernel_file).stem
    for name in names:
        line = f"from {own} import {name}"
        for node in tree.body:
            if isinstance(node, ast.Import):
                alias = next((a for a in node.names if (a.asname or a.name).split(".")[0] == name), None)
                if alias is not None:
                    line = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                alias = next((a for a in node.names if (a.asname or a.name) == name), None)
                if alias is not None:
                    line = f"from {node.module} import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
        if line not in lines:
            lines.append(line)
    return lines


def _text(kernel: str, kernel_file: str, test: str, line: int, imports: list[str], function: ast.FunctionDef) -> str:
    doc = (
        f'"""Written by `arena import aka`: the launch of `{kernel}` that {kernel_file}\'s `{test}` makes (line '
        f'{line}),\nas a function arena can call; its statements are the test\'s."""'
    )
    return "\n".join([doc, "", *imports, "", "", ast.unparse(function), ""])


def beside(kernel_file: str, name: str = ADAPTER_FILE) -> str:
    """The path of file `name` in the kernel file's folder."""
    parent = PurePosixPath(kernel_file).parent
    return name if str(parent) == "." else (parent / name).as_posix()
