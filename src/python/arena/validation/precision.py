"""Is a task's tolerance tight enough to refuse a lower-precision kernel? (the fast tier, check c)

A loosened tolerance (a `tolerances` override) must still catch a kernel that computes in less
precision than the task asks for. The reference stands in for such a kernel, lowered:
- a float16 or bfloat16 case: every floating intermediate it computes is rounded to the case
  dtype, and its sums and matrix products accumulate in it (the reference computed in
  float16/bfloat16, not float32: RoundIntermediates);
- a float32 case: its floating inputs are rounded through bfloat16 (a kernel that loads float32
  as bfloat16, or multiplies on bfloat16 tensor cores).
Each output of the lowered reference is compared with the float64 answer at the default
tolerance of its dtype and at the task's. Where the default refuses it, the lowered answer is
one the task should refuse too; the check fails for a dtype whose override accepts it on every
case where the default refuses it. A task with the default tolerances cannot fail it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch.overrides import TorchFunctionMode

from arena.harness.check import called_outputs, find_mismatch
from arena.harness.inputs import make_inputs, make_scalars, spec_dtype
from arena.task.task import Case, Task, TensorSpec, Tolerance
from arena.task.tolerance import DEFAULT_TOLERANCES, tolerance_for

LOWERED = {"float16": "intermediates rounded to float16", "bfloat16": "intermediates rounded to bfloat16"}
LOWERED_INPUTS = {"float32": "inputs rounded through bfloat16"}


@dataclass(frozen=True)
class Verdict:
    """One output of one case: the lowered reference against float64, at both tolerances."""

    case: str
    output: str
    dtype: str  # the output's dtype: the tolerance that applies
    default_error: str  # why the default tolerance refuses it ("" when it accepts)
    task_error: str  # why the task's tolerance refuses it ("" when it accepts)


def loosened(task: Task, dtype: str) -> Tolerance | None:
    """The task's tolerance for `dtype` when it accepts more than the default, else None."""
    mine, default = tolerance_for(task, dtype), DEFAULT_TOLERANCES.get(dtype)
    if default is None or (mine.atol <= default.atol and mine.rtol <= default.rtol):
        return None
    return mine


def judge(task: Task, verdicts: Sequence[Verdict]) -> tuple[list[str], list[str]]:
    """(failures, passed lines): per loosened dtype, does the task refuse the lowered reference on
    some case where the default tolerance refuses it?"""
    failures, passed = [], []
    for dtype in sorted({v.dtype for v in verdicts}):
        tolerance = loosened(task, dtype)
        should_refuse = [v for v in verdicts if v.dtype == dtype and v.default_error]
        if tolerance is None or not should_refuse:
            continue
        caught = [v for v in should_refuse if v.task_error]
        where = f"the {dtype} tolerance (atol {tolerance.atol:g}, rtol {tolerance.rtol:g})"
        if caught:
            passed.append(f"{where} refuses a lower-precision reference on case {caught[0].case!r}")
        else:
            first = should_refuse[0]
            failures.append(
                f"{where} accepts a lower-precision reference on every case where the default tolerance "
                f"refuses it ({', '.join(sorted({repr(v.case) for v in should_refuse}))}); e.g. case "
                f"{first.case!r}, at the default: {first.default_error}"
            )
    return failures, passed


def check_tolerance(task: Task, reference: Callable[..., Any], cases: Sequence[Case]) -> tuple[list, list, list]:
    """(failures, passed, notes) of check c over `cases`; a case is skipped once every loosened
    dtype of its outputs is refused somewhere (the answer cannot change)."""
    verdicts: list[Verdict] = []
    notes = []
    for case in cases:
        dtypes = {spec_dtype(spec, case) for spec in task.outputs}
        refused = {v.dtype for v in verdicts if v.task_error}
        if all(loosened(task, dtype) is None or dtype in refused for dtype in dtypes):
            continue
        try:
            verdicts += lowered_verdicts(task, reference, case)
        except Exception as raised:  # the task's own code under a rounding mode: say so, check the rest
            notes.append(
                f"tolerance check: the lower-precision reference fails on case {case.name!r}: "
                f"{type(raised).__name__}: {raised}"
            )
    failures, passed = judge(task, verdicts)
    return failures, passed, notes


def lowered_verdicts(task: Task, reference: Callable[..., Any], case: Case) -> list[Verdict]:
    """The lowered reference's outputs on `case` against float64 (empty when there is no lowering
    for the case's dtype or no output has a loosened tolerance)."""
    dtypes = [spec_dtype(spec, case) for spec in task.outputs]
    if not any(loosened(task, dtype) for dtype in dtypes):
        return []
    verdicts = []
    for spec, dtype, mine, want in lowered_outputs(task, reference, case):
        default = find_mismatch(spec.name, mine, want, DEFAULT_TOLERANCES[dtype]) or ""
        own = find_mismatch(spec.name, mine, want, tolerance_for(task, dtype)) or ""
        verdicts.append(Verdict(case.name, spec.name, dtype, default, own))
    return verdicts


def lowered_outputs(
    task: Task, reference: Callable[..., Any], case: Case
) -> list[tuple[TensorSpec, str, torch.Tensor, torch.Tensor]]:
    """(spec, dtype, lowered, float64) of each floating output of the reference on `case` that has a
    default tolerance (empty when there is no lowering for the case's dtype). Also used by the
    importer, which fits a loosened tolerance to them (arena/importer/fit.py)."""
    if case.dtype not in LOWERED and case.dtype not in LOWERED_INPUTS:
        return []
    inputs = make_inputs(task, case, torch.device("cpu"))
    scalars = make_scalars(task, case)
    wide = [x.double() if x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        exact = called_outputs(task, reference, wide, scalars)
        if case.dtype in LOWERED:
            with RoundIntermediates(getattr(torch, case.dtype)):
                low = called_outputs(task, reference, inputs, scalars)
        else:
            low = called_outputs(task, reference, [_through_bfloat16(x) for x in inputs], scalars)
    if isinstance(exact, str) or isinstance(low, str):
        raise ValueError(f"the reference: {exact if isinstance(exact, str) else low}")
    pairs = []
    for spec, mine, want in zip(task.outputs, low, exact):
        dtype = spec_dtype(spec, case)
        if not isinstance(mine, torch.Tensor) or not isinstance(want, torch.Tensor) or not mine.is_floating_point():
            continue
        if mine.shape != want.shape or dtype not in DEFAULT_TOLERANCES:
            continue
        pairs.append((spec, dtype, mine, want))
    return pairs


def _through_bfloat16(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dtype in (torch.float32, torch.float64):
        return tensor.to(torch.bfloat16).to(tensor.dtype)
    return tensor.clone()


_BLOCK = 16  # terms a kernel adds in float32 before they reach its low-precision accumulator
_SUMS = ("sum", "mean")
_PRODUCTS = ("matmul", "mm", "bmm", "__matmul__")


def _blocks(x: torch.Tensor) -> torch.Tensor:
    """The last dim of `x` as (blocks, _BLOCK), zero-padded."""
    pad = -x.shape[-1] % _BLOCK
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(*x.shape[:-1], -1, _BLOCK)


class RoundIntermediates(TorchFunctionMode):
    """While active, the reference computes in `low`: every floating tensor a torch call returns in
    more precision is rounded to `low` (its dtype kept), and sums and matrix products keep their
    running total in `low`, adding a float32 partial of _BLOCK terms at a time (a kernel whose
    accumulator has the case dtype). Views are left alone (their base was rounded when it was
    made); in-place results are rounded in place."""

    def __init__(self, low: torch.dtype) -> None:
        super().__init__()
        self.low = low

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        result = None
        if name in _SUMS and not kwargs.keys() - {"dim", "keepdim"}:
            result = self._sum(*args, **kwargs, mean=name == "mean")
        elif name in _PRODUCTS and not kwargs:
            result = self._product(*args)
        if result is None:
            result = func(*args, **kwargs)
        return self._round(result, name.endswith("_") and not name.endswith("__"))

    def _sum(self, x: Any, dim: Any = None, keepdim: bool = False, *, mean: bool) -> torch.Tensor | None:
        if not isinstance(x, torch.Tensor) or x.dtype not in (torch.float32, torch.float64) or x.dim() == 0:
            return None
        dims = list(range(x.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if not all(isinstance(d, int) for d in dims):
            return None
        dims = sorted(d % x.dim() for d in dims)
        kept = [d for d in range(x.dim()) if d not in dims]
        flat = x.permute(*kept, *dims).reshape(*[x.shape[d] for d in kept], -1)
        count = flat.shape[-1]
        result = self._accumulate(_blocks(flat).sum(-1)).to(x.dtype)
        result = result / count if mean else result
        if keepdim:
            for d in dims:
                result = result.unsqueeze(d)
        return result

    def _product(self, a: Any, b: Any) -> torch.Tensor | None:
        tensors = isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
        if not tensors or a.dim() < 2 or b.dim() < 2 or a.dtype not in (torch.float32, torch.float64):
            return None
        if a.shape[-1] != b.shape[-2]:
            return None
        # (..., M, blocks, B) x (..., N, blocks, B) -> (..., M, N, blocks): a float32 product per block.
        partials = torch.einsum("...mkb,...nkb->...mnk", _blocks(a), _blocks(b.transpose(-1, -2)))
        return self._accumulate(partials).to(a.dtype)

    def _accumulate(self, partials: torch.Tensor) -> torch.Tensor:
        """The partials along the last dim added one by one into a `low` running total."""
        total = torch.zeros(partials.shape[:-1], dtype=self.low)
        for index in range(partials.shape[-1]):
            total = total + partials[..., index].to(self.low)
        return total

    def _round(self, value: Any, in_place: bool) -> Any:
        if isinstance(value, (tuple, list)):
            return type(value)([self._round(v, in_place) for v in value])
        if not isinstance(value, torch.Tensor) or value.dtype not in (torch.float32, torch.float64):
            return value
        if in_place:
            return value.copy_(value.to(self.low))
        if value._is_view():
            return value
        return value.to(self.low).to(value.dtype)
