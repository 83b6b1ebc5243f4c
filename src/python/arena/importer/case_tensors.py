"""The values the cases give an input or an output, checked to be tensors of one rank, and their
dtype."""

from __future__ import annotations

from typing import Any

from arena.importer.outcome import NotFollowed, NotHeld
from arena.importer.values import Tensor, Unknown, describe
from arena.task.task import CASE_DTYPE, DTYPES, FLOAT_DTYPES


def checked_tensors(values: list[Any], what: str) -> list[Tensor]:
    for value in values:
        if isinstance(value, Unknown):
            raise NotFollowed(f"{what} cannot be read: {value.reason}")
        if not isinstance(value, Tensor):
            raise NotHeld(f"{what} is {describe(value)}, not a tensor")
    tensors: list[Tensor] = values
    ranks = {len(t.shape) for t in tensors}
    if len(ranks) > 1:
        raise NotHeld(f"{what} has rank {min(ranks)} in one case and {max(ranks)} in another")
    return tensors


def field_dtype(tensors: list[Tensor], what: str) -> tuple[str, tuple[str, ...]]:
    """The tensor's dtype, the same in every case; or, where it differs between cases and is a
    float dtype in each, `$dtype` (the case's dtype, docs/task-format.md) and each case's."""
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        if not dtypes <= set(FLOAT_DTYPES):
            raise NotHeld(f"{what} has dtypes {', '.join(sorted(dtypes))} in different cases")
        return CASE_DTYPE, tuple(t.dtype for t in tensors)
    dtype = dtypes.pop()
    if dtype not in DTYPES:
        raise NotHeld(f"{what} is {dtype}, which is not an arena dtype ({', '.join(DTYPES)})")
    return dtype, ()
