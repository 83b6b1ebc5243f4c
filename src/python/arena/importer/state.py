"""A baseline that keeps state across calls: the entry, or a function of the kernel file it calls,
stores into or reads from the module's mutable state (an output buffer it returns again, weights
cached by `data_ptr()`). Arena's stored-answer rule refuses such a baseline when it runs, so the
importer refuses the task when it reads it. Read with `ast`, never run."""

from __future__ import annotations

import ast

from arena.importer.outcome import StoredAnswer

STATEFUL = "the baseline keeps state across calls (an output buffer or cache), which arena's stored-answer rule refuses"
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "add"})
_TENSOR_MAKERS = frozenset(
    {"empty", "zeros", "ones", "full", "tensor", "randn", "rand", "randint", "arange", "empty_like", "zeros_like"}
)


def refuse_stateful(kernel_tree: ast.Module, entry: ast.FunctionDef) -> None:
    """NotImportable when `entry`, or a function of the kernel file it calls (transitively, by
    name), has a `global` statement, stores into a top-level name's items or calls a mutating
    method on it (`_cache[key] = out`, `_bufs.append(b)`), or reads a top-level name that holds
    state: one some function of the file mutates so, or rebinds through `global`, or one bound
    to a tensor at the top level (`_BUF = torch.empty(...)`)."""
    functions = {n.name: n for n in kernel_tree.body if isinstance(n, ast.FunctionDef)}
    top = _top_level_names(kernel_tree)
    stateful = {name for name in top if _tensor_at_top(kernel_tree, name)}
    for function in functions.values():
        stateful |= _globals_of(function) & top
        stateful |= _mutated(function, top)
    seen: set[str] = set()
    pending = [entry.name]
    while pending:
        name = pending.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        function = functions[name]
        declared = _globals_of(function)
        if declared:
            raise StoredAnswer(f"{STATEFUL}: {name}() declares `global {', '.join(sorted(declared))}`")
        local = _local_names(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in stateful and node.id not in local:
                raise StoredAnswer(f"{STATEFUL}: {name}() uses the top-level {node.id!r} (line {node.lineno})")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                pending.append(node.func.id)


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _tensor_at_top(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name)
                and value.func.value.id == "torch"
                and value.func.attr in _TENSOR_MAKERS
            ):
                return True
    return False


def _globals_of(function: ast.FunctionDef) -> set[str]:
    return {name for node in ast.walk(function) if isinstance(node, ast.Global) for name in node.names}


def _local_names(function: ast.FunctionDef) -> set[str]:
    """Names the function binds itself (parameters, assignments, loop targets), less its globals."""
    args = function.args
    local = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    local |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
    return local - _globals_of(function)


def _mutated(function: ast.FunctionDef, top: set[str]) -> set[str]:
    """The top-level names `function` changes in place: an item store, or a mutating method call."""
    local = _local_names(function)
    found: set[str] = set()
    for node in ast.walk(function):
        base = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            base = node.func.value
        if isinstance(base, ast.Name) and base.id in top and base.id not in local:
            found.add(base.id)
    return found


RETURNED_INPUT = "each call must return new output tensors, and the kernel returns its tensor argument"
_VIEWS = frozenset(
    {"view", "view_as", "reshape", "reshape_as", "contiguous", "squeeze", "unsqueeze", "flatten", "transpose"}
    | {"t", "permute", "narrow", "expand", "expand_as", "detach", "as_strided"}
)


def refuse_returned_arguments(entry: ast.FunctionDef, tensor_params: list[str]) -> None:
    """NotImportable when the entry returns one of its tensor arguments, or a view of one
    (`return num_sampled, num_rejected` after writing `num_sampled` in place, `return
    dst[:n]`), a name the body never rebinds: arena's harness refuses an output whose storage
    is an input's. Not called where the entry's return is declared ignored."""
    rebound = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(entry):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
        for position, value in enumerate(values):
            base = _viewed(value)
            if isinstance(base, ast.Name) and base.id in tensor_params and base.id not in rebound:
                raise StoredAnswer(
                    f"{RETURNED_INPUT} {base.id!r} (written in place) as its output {position}"
                    f" (line {node.lineno}: `{ast.unparse(node)}`)"
                )


def _viewed(node: ast.expr) -> ast.expr:
    """What `node` is a view of: `x[:n]`, `x.view(...)`, ... are x's storage."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS:
            node = node.func.value
        else:
            return node
