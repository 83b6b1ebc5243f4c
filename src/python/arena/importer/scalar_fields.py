"""The kernel call's other arguments as scalars by parameter name: a dim, a number or a flag."""

from __future__ import annotations

import ast
import math
from typing import Any

from arena.importer.correctness import TestLoop
from arena.importer.dims import Dims, is_int
from arena.importer.fields import ScalarField
from arena.importer.follow import FollowedCase
from arena.importer.outcome import KernelCallNotRead, NotFollowed, NotHeld
from arena.importer.values import Unknown, describe, same_value


def read_scalars(
    loop: TestLoop,
    cases: list[FollowedCase],
    dims: Dims,
    function: ast.FunctionDef,
    positions: list[int],
    keep_positional: bool = False,
) -> tuple[ScalarField, ...]:
    """The call's other arguments by parameter name; one equal to the function's default is left
    out, unless `keep_positional` and it is passed by position (the abi then names it)."""
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    defaults = _defaults(function)
    given: list[tuple[str, ast.expr, list[Any]]] = []
    for position in positions:
        if position >= len(params):
            raise KernelCallNotRead(f"`{loop.function_name}` takes its argument {position + 1} through *args")
        node = loop.kernel_call.args[position]
        given.append((params[position], node, [case.arguments[position] for case in cases]))
    positional = {param for param, _, _ in given} if keep_positional else set()
    takes = set(params) | {a.arg for a in function.args.kwonlyargs}
    for keyword in loop.kernel_call.keywords:
        if keyword.arg is None:
            raise KernelCallNotRead(f"`{loop.function_name}` is given **kwargs")
        if keyword.arg not in takes and function.args.kwarg is None:
            raise KernelCallNotRead(f"`{loop.function_name}` takes no argument {keyword.arg!r}")
        given.append((keyword.arg, keyword.value, [case.keywords[keyword.arg] for case in cases]))
    scalars = []
    for param, node, values in given:
        if param not in positional and param in defaults and all(same_value(v, defaults[param]) for v in values):
            continue  # the kernel's own default: nothing to pass
        scalars.append(_scalar(param, node, values, dims))
    return tuple(scalars)


def _scalar(param: str, node: ast.expr, values: list[Any], dims: Dims) -> ScalarField:
    test_name = node.id if isinstance(node, ast.Name) else None
    for value in values:
        if isinstance(value, Unknown):
            raise NotFollowed(f"argument {param}=`{ast.unparse(node)}` cannot be read: {value.reason}")
        if not isinstance(value, (int, float)):  # a bool is an int: a flag, passed as the test passes it
            raise NotHeld(
                f"argument {param}={describe(value)} is not a number or a bool; "
                "arena scalars are numbers, dims or flags"
            )
    if any(isinstance(value, bool) for value in values):
        if not all(isinstance(value, bool) for value in values) or len(set(values)) > 1:
            raise NotHeld(f"argument {param}=`{ast.unparse(node)}` is a bool that differs between cases")
        return ScalarField(param, values[0], test_name)
    if all(is_int(value) for value in values):
        named = dims.named(node, values)
        if isinstance(named, str) or len(set(values)) > 1:
            return ScalarField(param, named if isinstance(named, str) else dims.new(param, values), test_name)
    if len(set(values)) > 1:  # a float that differs by case: a case value of its own (a float dim)
        if not all(math.isfinite(value) for value in values):
            raise NotHeld(f"argument {param}=`{ast.unparse(node)}` is a float that differs between cases")
        return ScalarField(param, dims.new(param, [float(value) for value in values]), test_name)
    return ScalarField(param, values[0], test_name)


def _defaults(function: ast.FunctionDef) -> dict[str, Any]:
    """The kernel function's literal defaults by parameter name."""
    spec = function.args
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    pairs = list(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults))
    pairs += [(a.arg, d) for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None]
    defaults = {}
    for name, node in pairs:
        try:
            defaults[name] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            continue
    return defaults
