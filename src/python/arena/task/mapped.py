"""A draw mapped after it is made: `then` and `normalize` (docs/task-format.md, "Inputs").

`then` is a list of elementwise maps applied in order to a `normal`, `uniform` or `half_normal`
draw: `{"kind": "normal", "then": ["sigmoid", "log"]}` is a test's
`torch.randn(...).sigmoid().log()` (log-sigmoid gates), `{"kind": "uniform", "then": ["sigmoid"]}`
its `torch.rand(...).sigmoid()`. `normalize` is an axis: after the maps, the values are divided by
their sum along it, `{"kind": "uniform", "normalize": -1}` being `p = torch.rand(...); p = p /
p.sum(-1, keepdim=True)` (rows of probabilities). Each is checked on the values' range, known from
the draw's parameters and the maps before it: a `log` takes values above 0 (after a `sigmoid` or
an `exp`, or a draw whose low is above 0), a `normalize` values of at least 0 (their sum is then
above 0 almost surely). A case checks that the tensor is a float one and has the axis. The values
are made by the harness (harness/inputs.py): this module, like the rest of task/, imports no torch.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from arena.task.checks import FieldError, require_int
from arena.task.task import CASE_DTYPE, FLOAT_DTYPES, Case, TensorSpec

THEN = "then"
NORMALIZE = "normalize"
PARAMS = (THEN, NORMALIZE)
KINDS = ("normal", "uniform", "half_normal")  # independent float draws, whose range the parameters give
MAPS = ("sigmoid", "log", "exp")  # elementwise, in the draw's precision (torch's, on the drawing device)


def check(field: str, kind: str, params: Mapping[str, Any], what: str) -> None:
    """`then` is a non-empty list of MAPS, each defined on the values it is given; `normalize` an
    int axis over values of at least 0. `params` are the draw's, defaults left out."""
    low, open_low = _lowest(kind, params)
    maps = params.get(THEN)
    if maps is not None:
        if not isinstance(maps, (list, tuple)) or not maps:
            raise FieldError(field, f"{what} then must be a non-empty list of maps ({', '.join(MAPS)}), got {maps!r}")
        for position, name in enumerate(maps):
            if name not in MAPS:
                raise FieldError(field, f"{what} then[{position}] is {name!r}; expected one of {', '.join(MAPS)}")
            if name == "log" and not (low > 0 or (low == 0 and open_low)):
                raise FieldError(
                    field,
                    f"{what} then[{position}] takes the log of values down to {_shown(low)}; a log "
                    "needs values above 0 (a sigmoid or an exp before it, or a draw whose low is above 0)",
                )
            low, open_low = _mapped(name, low, open_low)
    if NORMALIZE in params:
        require_int(field, params[NORMALIZE], f"{what} normalize (an axis)")
        if low < 0:
            raise FieldError(
                field,
                f"{what} normalizes values down to {_shown(low)}; a normalize divides by a sum of values "
                "of at least 0 (a uniform draw from low >= 0, a half_normal, a sigmoid or an exp)",
            )


def check_case(case: Case, tensors: Sequence[TensorSpec]) -> None:
    """Each mapped input of `case` is a float tensor, and has the axis it normalizes along."""
    for spec in tensors:
        dist = case.dists.get(spec.name, spec.dist)
        if not any(key in dist.params for key in PARAMS):
            continue
        dtype = case.dtype if spec.dtype == CASE_DTYPE else spec.dtype
        where = f"case {case.name!r}: {spec.name!r}"
        if dtype not in FLOAT_DTYPES:
            raise FieldError("cases", f"{where} is {dtype}; then and normalize map float values")
        axis, rank = dist.params.get(NORMALIZE), len(spec.shape)
        if axis is not None and not -rank <= int(axis) < rank:
            raise FieldError(
                "cases", f"{where} is normalized along dim {axis}, which its {rank}-dim shape does not have"
            )


def _lowest(kind: str, params: Mapping[str, Any]) -> tuple[float, bool]:
    """The draw's lower bound, and whether no value reaches it."""
    if kind == "normal":
        return -math.inf, True
    return float(params.get("low", 0.0)), False  # uniform's [low, high), half_normal's |N| + low


def _mapped(name: str, low: float, open_low: bool) -> tuple[float, bool]:
    """The lower bound after an increasing map, and whether no value reaches it (a sigmoid's or an
    exp's values are above 0, however far below 0 the bound was)."""
    if name == "log":
        return (-math.inf, True) if low == 0 else (math.log(low), open_low)
    if low < -700:  # exp(-low) would overflow: the values are above 0, and the bound is 0
        return 0.0, True
    value = 1 / (1 + math.exp(-low)) if name == "sigmoid" else math.exp(min(low, 700.0))
    return value, open_low or value == 0


def _shown(low: float) -> str:
    return f"{low:g}"
