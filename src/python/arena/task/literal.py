"""An input given as a literal: `{"kind": "values", "values": [3, 5, 2]}` (docs/task-format.md, "Inputs").

The tensor's values are written in the declaration, a list for a 1-D input, lists of equal
length for a 2-D one (any rank, rectangular); no draw and no seed, so a hidden copy of a case
gets the same values. What a test writes as `torch.tensor(lengths_list, dtype=torch.int32)`:
sequence lengths, request offsets, values a kernel's output shape follows. A case whose values
differ gives its own through `dists`. Each case checks that the input's shape there is the
literal's shape, and that the values fit its dtype (integers in an integer tensor, within its
range; 0 or 1 in a bool one). The values are made by the harness (harness/inputs.py): this
module, like the rest of task/, imports no torch.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from arena.task.checks import FieldError, require_keys
from arena.task.task import CASE_DTYPE, FLOAT_DTYPES, Case, Distribution, TensorSpec

KIND = "values"
PARAMS = ("values",)
MAX_VALUES = 4096  # a literal is for small index tensors; anything larger belongs in a draw


def parse(field: str, raw: Mapping[str, Any], what: str) -> Distribution:
    require_keys(field, raw, f"{what} ({KIND})", ("kind", "values"), ("kind", *PARAMS))
    values = raw["values"]
    shape = literal_shape(field, values, f"{what} values")
    count = 1
    for size in shape:
        count *= size
    if count > MAX_VALUES:
        raise FieldError(field, f"{what} values has {count} elements, more than the {MAX_VALUES} a literal may hold")
    return Distribution(kind=KIND, params={"values": _as_lists(values)})


def literal_shape(field: str, values: Any, what: str) -> tuple[int, ...]:
    """The shape of a rectangular nest of non-empty lists of finite numbers (bools refused)."""
    if not isinstance(values, (list, tuple)) or not values:
        raise FieldError(field, f"{what} must be a non-empty list of numbers (or of such lists), got {values!r}")
    if all(isinstance(v, (list, tuple)) for v in values):
        shapes = {literal_shape(field, v, what) for v in values}
        if len(shapes) != 1:
            raise FieldError(field, f"{what} has rows of different shapes {sorted(shapes)}; a literal is rectangular")
        return (len(values), *shapes.pop())
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise FieldError(field, f"{what} holds {v!r}; expected numbers only (or lists of them, all alike)")
        if v != v or v in (float("inf"), float("-inf")):
            raise FieldError(field, f"{what} holds {v!r}; expected finite numbers")
    return (len(values),)


def _as_lists(values: Any) -> Any:
    return [_as_lists(v) for v in values] if isinstance(values, (list, tuple)) else values


def _flat(values: Any) -> list[int | float]:
    return [x for v in values for x in _flat(v)] if isinstance(values, list) else [values]


def check(case: Case, inputs: Sequence[TensorSpec], int_ranges: Mapping[str, tuple[int, int]]) -> None:
    """Each literal input of `case` has the literal's shape there, and values its dtype holds."""
    for spec in inputs:
        dist = case.dists.get(spec.name, spec.dist)
        if dist.kind != KIND:
            continue
        values = dist.params["values"]
        shape = tuple(case.dims[d] if isinstance(d, str) else int(d) for d in spec.shape)
        given = literal_shape("cases", values, f"{spec.name!r} values")
        where = f"case {case.name!r}: {spec.name!r}"
        if shape != given:
            raise FieldError(
                "cases", f"{where} has shape {list(shape)} there, but its values are a literal of shape {list(given)}"
            )
        dtype = case.dtype if spec.dtype == CASE_DTYPE else spec.dtype
        if dtype in FLOAT_DTYPES:
            continue
        low, high = (0, 1) if dtype == "bool" else int_ranges[dtype]
        for value in _flat(values):
            if not (isinstance(value, int) or value.is_integer()) or not low <= int(value) <= high:
                raise FieldError("cases", f"{where} is {dtype}, and its value {value!r} is not an {dtype} value")
