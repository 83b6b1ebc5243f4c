"""Where an input's value comes from in the test loop: its last assignment before the kernel call,
followed through moves, copies, casts and layouts, and a write through a mask after it."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from arena.importer.correctness import TestLoop, written_names
from arena.importer.follow import FollowedCase
from arena.importer.outcome import NotDrawn
from arena.importer.values import Tensor

PASSED_AS_IS = ("clone", "contiguous")  # a kernel argument `x.clone()` is the input x
_SAME_VALUES = PASSED_AS_IS + ("to",)  # `x = x.to(torch.float16)` keeps the draw of x


def through_copies(
    loop: TestLoop,
    cases: list[FollowedCase],
    node: ast.Name,
    values: list[Any],
    seen: set[str],
    writes: list[MaskWrite],
) -> tuple[ast.expr, list[str], list[str]]:
    """The expression `node`'s value comes from, followed through copies (`q_k = q.clone()`: the draw
    of q, which the reference reads as q) and casts (`a = a_f.to(torch.float16)`); the names copied
    and those cast. `writes` gets the writes through a mask after the draw. NotDrawn where the
    value is not drawn in the loop, or comes from a statement no distribution matches."""
    shown = ast.unparse(node)
    assignment = last_assignment(loop, node.id, writes=writes)
    copy_of: list[str] = []
    cast_of: list[str] = []
    while isinstance(assignment, ast.expr) and isinstance(source := _copied(assignment), ast.Name):
        if source.id in seen or source.id in copy_of or source.id == node.id:
            raise NotDrawn(f"input {shown!r} is a copy of {source.id!r}; arena draws each input on its own")
        copy_of.append(source.id)
        if any(_dtype_of(case.scope.names.get(source.id)) != _dtype_of(value) for case, value in zip(cases, values)):
            cast_of.append(source.id)  # other values than the source's
        assignment = last_assignment(loop, source.id)
    if assignment is None:
        raise NotDrawn(f"input {shown!r} is not drawn inside the test loop")
    if isinstance(assignment, ast.stmt):
        first = ast.unparse(assignment).splitlines()[0][:70]
        how = "comes from" if isinstance(assignment, ast.Assign) else f"is written by line {assignment.lineno},"
        raise NotDrawn(f"input {shown!r} {how} `{first}`, which no arena distribution matches")
    return assignment, copy_of, cast_of


def last_assignment(
    loop: TestLoop, name: str, before: ast.expr | None = None, writes: list[MaskWrite] | None = None
) -> ast.expr | ast.stmt | None:
    """The value the loop last assigns to `name` before the call, or the statement that binds it
    some other way (an unpacking, an import); None when the loop does not bind it. NotImportable
    when the loop writes into it after drawing it (`x[i] = 0`): no distribution draws that; where
    `writes` is given, a masked write after the draw (`x[torch.rand(...) < p] = v`) is added to it."""
    found: ast.expr | ast.stmt | None = None
    for statement in loop.statements:
        if statement is loop.call or (isinstance(statement, ast.Assign) and statement.value is before):
            break
        if isinstance(statement, ast.Assign) and [getattr(t, "id", "") for t in statement.targets] == [name]:
            if not _same_values(statement.value, name):  # `x = x.contiguous()` keeps the draw of x
                found = statement.value
                if writes is not None:
                    writes.clear()  # a write before this draw changes nothing it draws
        elif _keeps_values(statement):
            continue
        elif name in _stored_names(statement) or (
            not isinstance(statement, ast.Assign) and name in written_names(statement)
        ):
            found = statement  # an unpacking, or a loop, branch or in-place call that writes into it
        elif isinstance(statement, ast.Assign) and any(_base_name(t) == name for t in statement.targets):
            write = _mask_write(loop, statement, name) if writes is not None else None
            if write is None:
                first = ast.unparse(statement).splitlines()[0][:60]
                raise NotDrawn(f"input {name!r} is changed after it is drawn (line {statement.lineno}: `{first}`)")
            writes.append(write)  # type: ignore[union-attr]
    return found


@dataclass(frozen=True)
class MaskWrite:
    """`x[torch.rand(...) < p] = v`, or `m = torch.rand(...) < p` then `x[m] = v`: a share p of
    x's elements, chosen by a uniform draw, set to the constant v."""

    statement: ast.Assign
    rand: ast.Call  # torch.rand(...), its shape checked against x's in every case
    share: ast.expr  # p
    value: ast.expr  # v


def _mask_write(loop: TestLoop, statement: ast.Assign, name: str) -> MaskWrite | None:
    """The masked write `statement` makes into `name`, None when it is no such write. A mask bound
    to a name is that name's one assignment before the write, and no other statement reads it."""
    target = statement.targets[0]
    if len(statement.targets) != 1 or not isinstance(target, ast.Subscript):
        return None
    if not (isinstance(target.value, ast.Name) and target.value.id == name):
        return None
    mask = target.slice
    if isinstance(mask, ast.Name):
        bound = [
            s
            for s in loop.statements[: loop.statements.index(statement)]
            if mask.id in written_names(s) or mask.id in _stored_names(s)
        ]
        if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
            return None
        if not isinstance(bound[0].targets[0], ast.Name):
            return None
        readers = [
            s
            for s in loop.statements
            if s is not bound[0]
            and s is not statement
            and any(isinstance(n, ast.Name) and n.id == mask.id for n in ast.walk(s))
        ]
        if readers:
            return None
        mask = bound[0].value
    if not (isinstance(mask, ast.Compare) and len(mask.ops) == 1):
        return None
    left, right = mask.left, mask.comparators[0]
    if isinstance(mask.ops[0], ast.Gt):  # p > torch.rand(...)
        left, right = right, left
    elif not isinstance(mask.ops[0], ast.Lt):
        return None
    if not (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Attribute)
        and left.func.attr == "rand"
        and isinstance(left.func.value, ast.Name)
        and left.func.value.id == "torch"
        and all(k.arg == "device" for k in left.keywords)  # a dtype or a generator would change the share
        and not any(isinstance(a, ast.Starred) for a in left.args)
    ):
        return None
    return MaskWrite(statement, left, right, statement.value)


def _stored_names(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _base_name(target: ast.expr) -> str:
    """`x` for targets `x[i]`, `x.data` and `x[i][j]`; "" for a plain name."""
    if not isinstance(target, (ast.Subscript, ast.Attribute)):
        return ""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else ""


def _dtype_of(value: Any) -> str | None:
    return value.dtype if isinstance(value, Tensor) else None


def _copied(node: ast.expr) -> ast.expr:
    """`x` for `x.clone()`, `x.contiguous()`, `x.to(torch.int64)` and `x`: what the value copies;
    also for `x.transpose(1, 2).contiguous().transpose(1, 2)`, x's values laid out in memory another
    way (a layout arena does not keep: it hands every input over contiguous)."""
    start = node = _stripped(node)
    swaps: list[str] = []  # the transposes met, from the outside in; each cancels the same one next to it
    while (swap := _swap(node)) is not None:
        swaps = swaps[:-1] if swaps and swaps[-1] == swap[0] else [*swaps, swap[0]]
        node = _stripped(swap[1])
    return node if not swaps else start


def _stripped(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_VALUES:
        node = node.func.value
    return node


def _swap(node: ast.expr) -> tuple[str, ast.expr] | None:
    """(the swap, the tensor) of `x.transpose(a, b)` (a and b int literals, either order), `x.t()`, `x.T`."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return "T", node.value
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.keywords:
        return None
    if node.func.attr == "t" and not node.args:
        return "T", node.func.value
    if node.func.attr != "transpose" or len(node.args) != 2:
        return None
    axes = [a.value for a in node.args if isinstance(a, ast.Constant) and type(a.value) is int]
    return (f"{min(axes)},{max(axes)}", node.func.value) if len(axes) == 2 else None


def _same_values(node: ast.expr, name: str) -> bool:
    """Whether `node` is `name` moved, copied, cast or laid out again (`x.contiguous()`,
    `x.to(torch.float16)`, `x.transpose(1, 2).contiguous().transpose(1, 2)`)."""
    node = _copied(node)
    return isinstance(node, ast.Name) and node.id == name


def _keeps_values(statement: ast.stmt) -> bool:
    """An `if` that only lays tensors out again (`if w.stride(1) != 1: w = w.contiguous()`): the
    values are the same whichever branch runs."""
    if not isinstance(statement, ast.If):
        return False
    return all(
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and _same_values(s.value, s.targets[0].id)
        for s in statement.body + statement.orelse
    )
