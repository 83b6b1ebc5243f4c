"""Per-dtype tolerances: the defaults, and a task's view after its overrides are merged."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from arena.task.checks import FieldError, require_dict, require_keys, require_number
from arena.task.task import DTYPES, FLOAT_DTYPES, INT_DTYPES, Task, Tolerance

_FLOAT_DEFAULTS = {
    "float16": Tolerance(atol=1e-3, rtol=1e-3),
    "bfloat16": Tolerance(atol=8e-3, rtol=8e-3),
    "float32": Tolerance(atol=1e-5, rtol=1e-5),
    "float64": Tolerance(atol=1e-10, rtol=1e-10),
}
assert set(_FLOAT_DEFAULTS) == set(FLOAT_DTYPES)
# Integer (and bool) outputs must match exactly.
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = MappingProxyType(
    {**_FLOAT_DEFAULTS, **{dtype: Tolerance(atol=0.0, rtol=0.0) for dtype in INT_DTYPES}}
)


def tolerance_for(task: Task, dtype: str) -> Tolerance:
    """The tolerance an output of `dtype` is checked with in `task` (its override, else the default)."""
    if dtype in task.tolerances:
        return task.tolerances[dtype]
    if dtype in DEFAULT_TOLERANCES:
        return DEFAULT_TOLERANCES[dtype]
    raise KeyError(f"no tolerance for dtype {dtype!r}")


def merge_tolerances(overrides: Mapping[str, Mapping[str, float]]) -> dict[str, Tolerance]:
    """Every dtype's tolerance, with `overrides` (dtype -> {atol?, rtol?}, already checked) applied."""
    merged = dict(DEFAULT_TOLERANCES)
    for dtype, values in overrides.items():
        base = merged[dtype]
        merged[dtype] = Tolerance(atol=float(values.get("atol", base.atol)), rtol=float(values.get("rtol", base.rtol)))
    return dict(sorted(merged.items()))


def parse_tolerance_overrides(value: Any) -> dict[str, Mapping[str, float]]:
    """The `tolerances` field checked: dtype -> {atol?, rtol?}, each a number >= 0."""
    raw = require_dict("tolerances", value)
    for dtype, tolerance in raw.items():
        if dtype not in DTYPES:
            raise FieldError("tolerances", f"{dtype!r} is not one of {', '.join(DTYPES)}")
        tolerance = require_dict("tolerances", tolerance, f"tolerance for {dtype}")
        require_keys("tolerances", tolerance, f"tolerance for {dtype}", (), ("atol", "rtol"))
        for key, number in tolerance.items():
            if require_number("tolerances", number, f"{dtype} {key}") < 0:
                raise FieldError("tolerances", f"{dtype} {key} must be >= 0, got {number}")
    return dict(raw)
