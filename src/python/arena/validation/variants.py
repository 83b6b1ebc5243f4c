"""Undeclared variants of a task's untimed cases: the fast tier's hidden-case check draws them.

A baseline that matches its reference only on the seeds and sizes the task declares would fail
the hidden cases every evaluation draws (or a size the task claims to support), so each untimed
case is drawn again with a seed derived from it and, for every "free" dim, a nearby odd size.
A dim is free when some untimed case sets it to an odd value above 1: the task then claims that
any size works there. Dims that are powers of two or multiples of a block in every case are
left as declared (a kernel may rely on them). The fast tier redraws a few cases of each task
(pick_cases): each variant costs it a baseline call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Sequence

from arena.task.checks import FieldError
from arena.task.task import Case, Task
from arena.task.vectors import check_permutations

_SALT = "arena-validation-hidden"


def hidden_seed(case: Case) -> int:
    """A seed no declaration names, derived from the case (stable across machines)."""
    digest = hashlib.sha256(f"{_SALT}:{case.name}:{case.seed}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def free_dims(task: Task) -> frozenset[str]:
    """Dims some untimed case sets to an odd value above 1."""
    return frozenset(
        dim for case in task.cases if not case.timed for dim, value in case.dims.items() if value > 1 and value % 2
    )


def hidden_variants(task: Task, case: Case) -> tuple[Case, ...]:
    """The variants of `case` to check, most telling first: a new seed with every free dim of the
    case moved to the next odd size (when it has one), then the new seed alone."""
    seed = hidden_seed(case)
    reseeded = dataclasses.replace(case, name=f"{case.name}~reseeded", seed=seed, timed=False)
    free = free_dims(task)
    dims = {dim: value + 2 if dim in free and value > 1 and value % 2 else value for dim, value in case.dims.items()}
    if dims == dict(case.dims):
        return (reseeded,)
    try:  # a permutation drawing more distinct values than its range holds: the sizes stay
        check_permutations(dataclasses.replace(case, dims=dims), task.inputs)
    except FieldError:
        return (reseeded,)
    moved = ", ".join(f"{dim}={value}" for dim, value in dims.items() if value != case.dims[dim])
    return (dataclasses.replace(reseeded, name=f"{case.name}~{moved}", dims=dims), reseeded)


def pick_cases(task: Task, cases: Sequence[Case], count: int) -> list[tuple[Case, tuple[Case, ...]]]:
    """`count` of `cases` with their variants: those whose free dims move first, then the rest,
    smallest inputs first within each (each variant costs a baseline call in the fast tier)."""

    def size(case: Case) -> int:
        return sum(math.prod(case.dims.get(d, 1) if isinstance(d, str) else d for d in s.shape) for s in task.inputs)

    chosen = [(case, hidden_variants(task, case)) for case in cases]
    chosen.sort(key=lambda pair: (len(pair[1]) == 1, size(pair[0])))
    return chosen[:count]
