"""The test loop followed once per TEST_SHAPES value, on shapes (arena.importer.interpreter).

Each case gets its own scope: the runner's top-level names, the setup of run_correctness, the
kernel module read from its source, the loop target bound to that case's value. What the
kernel call and the references come to is kept per output, as a Tensor or as Unknown with the
reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from arena.importer.correctness import TestLoop, result_names
from arena.importer.interpreter import Interpreter, Scope
from arena.importer.outcome import KernelCallNotRead, NotFollowed, NotHeld
from arena.importer.values import CannotRead, SourceModule, Unknown, describe, same_value


@dataclass(frozen=True)
class FollowedCase:
    """One TEST_SHAPES value, followed."""

    index: int
    scope: Scope  # every name the loop bound in this case (the call's outputs as the result names)
    interpreter: Interpreter
    seed: int | None
    arguments: tuple[Any, ...]  # the kernel call's positional arguments
    keywords: Mapping[str, Any]  # and its keyword arguments
    kernel_outputs: tuple[Any, ...]  # per output (TestLoop.result_names), as the call returned it: a Tensor or Unknown
    reference_outputs: tuple[Any, ...]  # per output, what the test compares it with
    # a kernel that writes into its arguments also returned something, which the test ignores
    returned: bool = False

    def read(self, node: ast.expr) -> Any:
        """`node`'s value in this case; Unknown when it cannot be read."""
        return _evaluate(self.interpreter, node, self.scope)


def follow_cases(loop: TestLoop, runner: Mapping[str, Any], kernel: SourceModule) -> list[FollowedCase]:
    return [_follow(loop, index, value, runner, kernel) for index, value in enumerate(loop.shapes)]


def same_in_every_case(cases: list[FollowedCase], node: ast.expr, what: str) -> Any:
    """The value `node` has in every case; NotImportable when it varies or cannot be read."""
    values = [case.read(node) for case in cases]
    for value in values:
        if isinstance(value, Unknown):
            raise NotFollowed(f"{what} `{ast.unparse(node)}` cannot be read: {value.reason}")
    if not all(same_value(value, values[0]) for value in values):
        raise NotHeld(f"{what} `{ast.unparse(node)}` differs between cases")
    return values[0]


def constant_reader(cases: list[FollowedCase], what: str) -> Callable[[ast.expr], Any]:
    return lambda node: same_in_every_case(cases, node, what)


def _follow(loop: TestLoop, index: int, value: object, runner: Mapping[str, Any], kernel: SourceModule) -> FollowedCase:
    interpreter = Interpreter()
    scope = Scope({}, runner)
    interpreter.run_block(list(loop.setup), scope)
    scope.names[loop.module_name] = kernel
    if loop.index is not None:
        scope.names[loop.index] = index
    try:
        interpreter.bind(loop.target, value, scope)
    except CannotRead as error:
        raise NotFollowed(f"case {index + 1}: {error}") from None
    seed = None if loop.seed is None else _evaluate(interpreter, loop.seed, scope)
    arguments: tuple[Any, ...] = ()
    keywords: dict[str, Any] = {}
    outputs: tuple[Any, ...] = ()
    ignored = False
    for statement in loop.statements:
        if statement is loop.call:
            arguments = tuple(_evaluate(interpreter, arg, scope) for arg in loop.kernel_call.args)
            keywords = {k.arg or "**": _evaluate(interpreter, k.value, scope) for k in loop.kernel_call.keywords}
            returned = _evaluate(interpreter, loop.kernel_call, scope)
            # what it returns beside the arguments it writes, the test never reads: declared ignored
            ignored = loop.writes and returned is not None
            if loop.writes:  # the written arguments keep their shapes and dtypes
                outputs = tuple(_evaluate(interpreter, ast.Name(name, ast.Load()), scope) for name in loop.result_names)
            else:
                outputs = _outputs(loop, index, returned)
                scope.names.update(zip(loop.result_names, outputs))
                # an argument it also writes, which the test compares, keeps its shape and dtype
                outputs += tuple(_evaluate(interpreter, ast.Name(name, ast.Load()), scope) for name in loop.written)
        else:
            interpreter.run_statement(statement, scope)
    return FollowedCase(
        index=index,
        scope=scope,
        interpreter=interpreter,
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        arguments=arguments,
        keywords=keywords,
        kernel_outputs=outputs,
        reference_outputs=tuple(_evaluate(interpreter, c.reference, scope) for c in loop.comparisons),
        returned=ignored,
    )


def _outputs(loop: TestLoop, index: int, returned: Any) -> tuple[Any, ...]:
    """What the kernel call returned, per name the test binds it to."""
    names = result_names(loop.call)
    if not loop.several or isinstance(returned, Unknown):
        return (returned,) * len(names)
    if not isinstance(returned, (tuple, list)):
        raise KernelCallNotRead(
            f"case {index + 1}: `{loop.function_name}` returns {describe(returned)}, "
            f"which the test unpacks into {len(names)} names"
        )
    if len(returned) != len(names):
        raise KernelCallNotRead(
            f"case {index + 1}: `{loop.function_name}` returns {len(returned)} values and the test unpacks "
            f"{len(names)} ({', '.join(names)})"
        )
    return tuple(returned)


def _evaluate(interpreter: Interpreter, node: ast.expr, scope: Scope) -> Any:
    try:
        value = interpreter.evaluate(node, scope)
    except CannotRead as error:
        return Unknown(str(error))
    except RecursionError:
        return Unknown("the code nests too deeply to follow")
    return value
