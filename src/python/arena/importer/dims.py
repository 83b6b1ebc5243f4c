"""The dims of a task's shapes and scalars, by name, with their value in each case: the test's own
names where it uses them, and a dim of its own for an axis it computes."""

from __future__ import annotations

import ast
from typing import Any, Sequence

from arena.importer.correctness import TestLoop
from arena.importer.follow import FollowedCase


class Dims:
    """Dims by name with their value in each case; the ones used go into the cases."""

    def __init__(self, cases: Sequence[FollowedCase], loop: TestLoop) -> None:
        self.count = len(cases)
        skipped = {loop.index, loop.module_name, *loop.result_names}
        names = [n for n in cases[0].scope.names if n not in skipped and not n.startswith("_")]
        self.values: dict[str, list[Any]] = {  # ints; floats for a float scalar that differs by case
            name: [case.scope.names[name] for case in cases]
            for name in names
            if all(is_int(case.scope.names.get(name)) for case in cases)
        }
        self.used: list[str] = []
        self.taken: set[str] = set()

    def use(self, name: str) -> str:
        if name not in self.used:
            self.used.append(name)
        return name

    def named(self, node: ast.expr, values: list[int]) -> str | int | None:
        """The dim `node` names, if it is a dim's name holding `values`."""
        if isinstance(node, ast.Name) and self.values.get(node.id) == values:
            return self.use(node.id)
        if isinstance(node, ast.Constant) and is_int(node.value) and all(v == node.value for v in values):
            return int(node.value)
        return None

    def matching(self, values: list[int], base: str, avoid: Sequence[str | int] = ()) -> str | int:
        """A dim holding `values` in every case (one not in `avoid`, the shape's axes so far, when
        there is one: [M, N] rather than [M, M] where M == N in every case); else the constant;
        else a new dim `base`."""
        preferred = self.used + [name for name in self.values if name not in self.used]
        candidates = [
            name
            for name in preferred
            if self.values[name] == values and not any(isinstance(v, float) for v in self.values[name])
        ]
        if candidates:
            return self.use(min(candidates, key=lambda name: name in avoid))  # min keeps the first of equals
        if len(set(values)) == 1:
            return values[0]
        return self.new(base, values)

    def new(self, base: str, values: Sequence[int | float]) -> str:
        name, suffix = base, 1
        while name in self.values or name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.values[name] = list(values)
        return self.use(name)

    def per_case(self) -> tuple[dict[str, int | float], ...]:
        """Each case's dims; a float one (a float scalar that differs by case) stays a float."""
        return tuple({name: _case_value(self.values[name][k]) for name in self.used} for k in range(self.count))


def _case_value(value: float) -> int | float:
    return value if isinstance(value, float) else int(value)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
