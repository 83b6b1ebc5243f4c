"""A kernel function that returns a tuple of which the test compares some elements only (vLLM's
`out, _, _ = mod.layer_norm_fwd(...)`, or `result_tuple = mod.layer_norm_gated_fwd(...)` then
`result = result_tuple[0] if isinstance(result_tuple, tuple) else result_tuple`), read through a
function appended to the kernel file's copy that returns those elements alone.

Arena checks every output the entry returns; the test checks the elements it keeps and never
reads the others (`mean` and `rstd` beside a layer norm's `y`, None in some cases). The entry is
then `<fn>_outputs`, appended as arena.importer.returned_argument appends one: it takes what the
kernel function takes, calls it and returns the kept elements, which is what the test compares.
Only what is read exactly: the test's own statements name the elements (`_` for each one left, read
by nothing; or one `name[k]`, through `isinstance(name, tuple)` or not, the tuple read by nothing
else), and every `return` of the kernel function returns a tuple display of one length, so that
`isinstance(..., tuple)` is true and `[k]` is that element.
"""

from __future__ import annotations

import ast


def pick_compared(body: list[ast.stmt], module_name: str) -> tuple[list[ast.stmt], tuple[int, ...]]:
    """`body` with the kernel call binding only the elements the test keeps (`out = mod.fn(...)`),
    and their positions in what it returns; `body` and () where the test keeps the whole result."""
    for at, node in enumerate(body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _on_module(node.value, module_name)):
            continue
        target, rest = node.targets[0], body[at + 1 :]
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = [e.id for e in target.elts]  # type: ignore[attr-defined]
            kept = tuple(k for k, name in enumerate(names) if name != "_")
            if len(kept) == len(names) or not kept or "_" in _loaded(rest):
                return body, ()
            new: ast.expr = (
                ast.Name(names[kept[0]], ast.Store())
                if len(kept) == 1
                else ast.Tuple([ast.Name(names[k], ast.Store()) for k in kept], ast.Store())
            )
            return [*body[:at], _bound(node, new), *rest], kept
        if isinstance(target, ast.Name) and rest:
            element = _element_of(rest[0], target.id)
            if element is None or target.id in _loaded(rest[1:]):
                return body, ()
            name, index = element
            return [*body[:at], _bound(node, ast.Name(name, ast.Store())), *rest[1:]], (index,)
        return body, ()
    return body, ()


def _element_of(node: ast.stmt, tuple_name: str) -> tuple[str, int] | None:
    """(name, k) for `name = t[k]` or `name = t[k] if isinstance(t, tuple) else t`, t `tuple_name`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    value = node.value
    if isinstance(value, ast.IfExp):
        test = value.test
        checked = (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and not test.keywords
            and _is_name(test.args[0], tuple_name)
            and _is_name(test.args[1], "tuple")
        )
        if not checked or not _is_name(value.orelse, tuple_name):
            return None
        value = value.body
    if (
        isinstance(value, ast.Subscript)
        and _is_name(value.value, tuple_name)
        and isinstance(value.slice, ast.Constant)
        and type(value.slice.value) is int
        and value.slice.value >= 0
    ):
        return node.targets[0].id, value.slice.value
    return None


def _bound(node: ast.Assign, target: ast.expr) -> ast.Assign:
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([target], node.value), node))


def _on_module(value: ast.expr, module_name: str) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == module_name
    )


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _loaded(body: list[ast.stmt]) -> set[str]:
    return {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
