"""An input computed from another input, not drawn: `cumsum_of` (docs/task-format.md, "Inputs").

`{"kind": "cumsum_of", "input": "dt", "dim": -1, "scale": -0.1}` is the running sums along `dim`
of the input `dt`'s values times `scale`: what a test computes as `dA_cumsum = torch.cumsum(dt *
-0.1, dim=-1)` and passes beside `dt` (Mamba's chunked scan), whose kernel reads both. A draw of
its own would no longer be that function of `dt`. The source is an input declared before it, of
the same shape, itself drawn (not derived). Its values are made by the harness
(harness/inputs.py `derived_values`): this module, like the rest of task/, imports no torch (the
light command line reads task declarations without it).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from arena.task.checks import FieldError, require_identifier, require_int, require_keys, require_number
from arena.task.task import Case, Distribution, TensorSpec

KIND = "cumsum_of"
PARAMS = ("input", "dim", "scale")


def parse(field: str, raw: Mapping[str, Any], what: str) -> Distribution:
    require_keys(field, raw, f"{what} ({KIND})", ("kind", "input", "dim"), ("kind", *PARAMS))
    params: dict[str, Any] = {
        "input": require_identifier(field, raw["input"], f"{what} input (an input's name)"),
        "dim": require_int(field, raw["dim"], f"{what} dim"),
    }
    if "scale" in raw:
        params["scale"] = require_number(field, raw["scale"], f"{what} scale")
    return Distribution(kind=KIND, params=params)


def check(case: Case, inputs: Sequence[TensorSpec]) -> None:
    """Each derived input of `case` names an input declared before it, drawn, of its shape, and
    sums along an axis that shape has."""
    for position, spec in enumerate(inputs):
        dist = case.dists.get(spec.name, spec.dist)
        if dist.kind != KIND:
            continue
        name = str(dist.params["input"])
        earlier = {s.name: s for s in inputs[:position]}
        where = f"case {case.name!r}: {spec.name!r} is the running sums of {name!r}"
        if name not in earlier:
            raise FieldError("inputs", f"{where}, which is not an input declared before it")
        if earlier[name].shape != spec.shape:
            raise FieldError("inputs", f"{where}, whose shape {list(earlier[name].shape)} is not its own")
        if case.dists.get(name, earlier[name].dist).kind == KIND:
            raise FieldError("inputs", f"{where}, which is itself derived; name the input it is drawn from")
        rank = len(spec.shape)
        if not -rank <= int(dist.params["dim"]) < max(rank, 1):
            raise FieldError("inputs", f"{where} along dim {dist.params['dim']}, which its shape does not have")
