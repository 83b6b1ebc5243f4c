"""A loop over `zip(results, refs)` that compares each of the kernel's outputs with its reference,
unrolled once per output."""

from __future__ import annotations

import ast
import copy

from arena.importer.calls import is_call_with_one_argument
from arena.importer.syntax import Renamer


def unroll_output_loops(body: list[ast.stmt], functions: dict[str, ast.FunctionDef], module: str) -> list[ast.stmt]:
    """`results = mod.fn(...)`, `refs = reference(...)` and `for idx, (r, ref) in
    enumerate(zip(results, refs)): ...compare r with ref...`, where every `return` of the
    runner's `reference` is a tuple of N values none of which is None: the kernel's N outputs
    unpacked (`results_0, results_1 = mod.fn(...)`) and the loop's body once per output, its
    names suffixed (`r_0 = results_0`, `ref_0 = refs[0]`), `if ref is None: continue` dropped."""
    result = list(body)
    for position, node in enumerate(result):
        if not isinstance(node, ast.For):
            continue
        parts = _zip_loop(node)
        if parts is None:
            continue
        index, output_name, reference_name, outputs, references = parts
        call_position = _assigned_at(result[:position], outputs)
        reference_position = _assigned_at(result[:position], references)
        if call_position is None or reference_position is None:
            continue
        call, made = result[call_position], result[reference_position]
        if not (_calls_on(call, module) and isinstance(made, ast.Assign) and isinstance(made.value, ast.Call)):
            continue
        maker = made.value.func.id if isinstance(made.value.func, ast.Name) else ""
        count = _tuple_returns(functions.get(maker))
        if count is None:
            continue
        loop_body = [s for s in node.body if not _skips_none(s, reference_name)]
        if any(isinstance(n, (ast.Continue, ast.Break)) for s in loop_body for n in ast.walk(s)):
            continue
        names = [f"{outputs}_{k}" for k in range(count)]
        unpacked = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        called = call.value  # type: ignore[attr-defined]
        result[call_position] = ast.copy_location(ast.Assign([unpacked], called), call)
        assigned = {
            n.id for s in loop_body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        unrolled: list[ast.stmt] = []
        for k in range(count):
            renames: dict[str, ast.expr] = {
                name: ast.Name(f"{name}_{k}", ast.Load()) for name in assigned | {output_name, reference_name}
            }
            if index:
                renames[index] = ast.Constant(k)
            unrolled.append(
                ast.copy_location(
                    ast.Assign([ast.Name(f"{output_name}_{k}", ast.Store())], ast.Name(names[k], ast.Load())), node
                )
            )
            item = ast.Subscript(ast.Name(references, ast.Load()), ast.Constant(k), ast.Load())
            unrolled.append(ast.copy_location(ast.Assign([ast.Name(f"{reference_name}_{k}", ast.Store())], item), node))
            unrolled += [Renamer(renames).visit(copy.deepcopy(s)) for s in loop_body]
        result[position : position + 1] = [ast.fix_missing_locations(s) for s in unrolled]
        return unroll_output_loops(result, functions, module)
    return result


def _zip_loop(node: ast.For) -> tuple[str | None, str, str, str, str] | None:
    """(index, output, reference, outputs, references) of `for [idx,] (r, ref) in [enumerate(]zip(results, refs)[)]`."""
    iterated, target, index = node.iter, node.target, None
    if is_call_with_one_argument(iterated, "enumerate"):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
            return None
        iterated, index, target = iterated.args[0], target.elts[0].id, target.elts[1]
    if not (
        isinstance(iterated, ast.Call)
        and getattr(iterated.func, "id", "") == "zip"
        and len(iterated.args) == 2
        and all(isinstance(a, ast.Name) for a in iterated.args)
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
    ):
        return None
    output, reference = (e.id for e in target.elts)  # type: ignore[attr-defined]
    outputs, references = (a.id for a in iterated.args)  # type: ignore[attr-defined]
    return index, output, reference, outputs, references


def _assigned_at(body: list[ast.stmt], name: str) -> int | None:
    for position in range(len(body) - 1, -1, -1):
        node = body[position]
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            return position
    return None


def _calls_on(node: ast.stmt, module: str) -> bool:
    value = getattr(node, "value", None)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == module
    )


def _tuple_returns(function: ast.FunctionDef | None) -> int | None:
    """N when every `return` of `function` (not of a function inside it) is a tuple of N values,
    none of them the constant None."""
    if function is None:
        return None
    returns: list[ast.Return] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        pending += list(ast.iter_child_nodes(node))
    sizes = {
        len(r.value.elts)
        for r in returns
        if isinstance(r.value, ast.Tuple)
        and not any(isinstance(e, ast.Constant) and e.value is None for e in r.value.elts)
    }
    if len(sizes) != 1 or not all(isinstance(r.value, ast.Tuple) for r in returns):
        return None
    return sizes.pop()


def _skips_none(node: ast.stmt, name: str) -> bool:
    """`if ref is None: continue`."""
    return (
        isinstance(node, ast.If)
        and ast.unparse(node.test) == f"{name} is None"
        and len(node.body) == 1
        and isinstance(node.body[0], ast.Continue)
        and not node.orelse
    )
