"""Test vectors as tensors: inputs drawn from a TensorSpec, a Distribution and a case seed.

Draws happen on a CPU torch.Generator (the same numbers on every machine) and are then moved
to the device; tensors of 4M elements or more are drawn on the device's own generator instead
(CPU draws of hundreds of MB would dominate an evaluation's overhead), so their values are
reproducible per device kind. Hidden cases reuse a declared case with seeds derived from the
run's secret seed, which the parent draws and never shows to the candidate.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Callable, Mapping

import torch

from arena.task import derived, literal, mapped
from arena.task.task import CASE_DTYPE, Case, Distribution, Task, TensorSpec
from arena.task.vectors import MASK_PARAMS, base_distribution

_DEVICE_DRAW_NUMEL = 1 << 22
# Defaults for parameters a declaration may leave out (see docs/task-format.md).
_DEFAULTS: Mapping[str, Mapping[str, float]] = {
    "normal": {"mean": 0.0, "std": 1.0},
    "uniform": {"low": 0.0, "high": 1.0},
    "wide": {"low": -3.0, "high": 3.0},
    "large": {"scale": 1000.0},
    "arange": {"start": 0, "step": 1},
    "half_normal": {"std": 1.0, "low": 0.0},
}
# A `then` list's maps (task/mapped.py), elementwise in the draw's precision on the drawing device.
_MAPS: Mapping[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sigmoid": torch.sigmoid,
    "log": torch.log,
    "exp": torch.exp,
}


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts (stable across processes and machines, unlike hash())."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def hidden_cases(case: Case, secret_seed: int, count: int) -> tuple[Case, ...]:
    """`count` copies of `case` with secret seeds, named "<case>~hidden<i>" (checked, never timed)."""
    return tuple(
        dataclasses.replace(
            case, name=f"{case.name}~hidden{i}", seed=derive_seed(secret_seed, case.name, i), timed=False
        )
        for i in range(count)
    )


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def spec_dtype(spec: TensorSpec, case: Case) -> str:
    return case.dtype if spec.dtype == CASE_DTYPE else spec.dtype


def spec_shape(spec: TensorSpec, case: Case) -> tuple[int, ...]:
    return tuple(case.dims[d] if isinstance(d, str) else int(d) for d in spec.shape)


def make_inputs(task: Task, case: Case, device: torch.device, on_device: bool = False) -> list[torch.Tensor]:
    """The case's input tensors, contiguous on `device`, in declared order. Small tensors are drawn
    on the CPU (the same values on every machine) unless `on_device` (the timed calls' fresh sets:
    thousands a case, where a CPU draw of a few MiB costs milliseconds)."""
    made: dict[str, torch.Tensor] = {}
    for index, spec in enumerate(task.inputs):
        dist = case.dists.get(spec.name, spec.dist)
        if dist.kind == derived.KIND:  # computed from an input made above (arena/task/derived.py)
            made[spec.name] = derived_values(dist, made[str(dist.params["input"])], torch_dtype(spec_dtype(spec, case)))
        else:
            made[spec.name] = make_tensor(spec, dist, case, derive_seed(case.seed, index), device, on_device)
    return list(made.values())


def derived_values(dist: Distribution, source: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A `cumsum_of` input (task/derived.py): the running sums of `source` (as the entry gets it)
    times scale, in float64 for a float64 input and float32 otherwise, then cast to `dtype`; on
    `source`'s device."""
    work = torch.float64 if dtype == torch.float64 else torch.float32
    scaled = source.to(work) * float(dist.params.get("scale", 1.0))
    return scaled.cumsum(int(dist.params["dim"])).to(dtype).contiguous()


def make_scalars(task: Task, case: Case) -> dict[str, float | int]:
    """Keyword arguments: a declared number, or the value of the dim a string names."""
    return {k: case.dims[v] if isinstance(v, str) else v for k, v in task.scalars.items()}


def make_tensor(
    spec: TensorSpec, dist: Distribution, case: Case, seed: int, device: torch.device, on_device: bool = False
) -> torch.Tensor:
    shape = spec_shape(spec, case)
    dtype = torch_dtype(spec_dtype(spec, case))
    draw_on = (
        device
        if device.type != "cpu" and (on_device or math.prod(shape) >= _DEVICE_DRAW_NUMEL)
        else torch.device("cpu")
    )
    generator = torch.Generator(device=draw_on)
    generator.manual_seed(seed)
    values = _draw(dist, shape, dtype, case.dims, generator, draw_on)
    if dtype == torch.bool:
        values = values != 0
    elif not dtype.is_floating_point and values.is_floating_point():
        values = values.round()
    return values.to(dtype).to(device).contiguous()


def _draw(
    dist: Distribution,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    dims: Mapping[str, int],
    gen: torch.Generator,
    on: torch.device,
) -> torch.Tensor:
    p: dict[str, float | int | str] = {**_DEFAULTS.get(dist.kind, {}), **dist.params}
    work = torch.float64 if dtype == torch.float64 else torch.float32
    if any(key in p for key in mapped.PARAMS):  # the draw, its maps in order, then divided by its sums
        base = Distribution(dist.kind, {k: v for k, v in dist.params.items() if k not in mapped.PARAMS})
        values = _draw(base, shape, dtype, dims, gen, on)
        for name in dist.params.get(mapped.THEN, ()):  # type: ignore[union-attr]
            values = _MAPS[str(name)](values)
        if mapped.NORMALIZE in p:
            values = values / values.sum(int(p[mapped.NORMALIZE]), keepdim=True)
        return values
    if "masked" in p:  # the draw, then a share `masked` of its elements set to mask_value, by the same generator
        base = Distribution(dist.kind, {k: v for k, v in dist.params.items() if k not in MASK_PARAMS})
        drawn = _draw(base, shape, dtype, dims, gen, on)
        chosen = torch.rand(shape, generator=gen, device=on, dtype=work) < float(p["masked"])
        fill = float(p["mask_value"])  # float("nan") for "nan"
        return drawn.masked_fill(chosen, fill if drawn.is_floating_point() else int(fill))
    if dist.kind == "cumsum":  # running sums along `dim` of a draw of the base kind, on the same device
        return _draw(base_distribution(dist), shape, dtype, dims, gen, on).cumsum(int(p["dim"]))
    if dist.kind == "tril":  # the base draw where j <= (i mod n_cols) + diagonal, i along rows, j along cols
        return _draw(base_distribution(dist), shape, dtype, dims, gen, on) * _tril_mask(shape, p, on)
    return _plain(dist.kind, p, shape, dtype, dims, gen, on)


def _plain(
    kind: str,
    p: Mapping[str, float | int | str],
    shape: tuple[int, ...],
    dtype: torch.dtype,
    dims: Mapping[str, int],
    gen: torch.Generator,
    on: torch.device,
) -> torch.Tensor:
    """A draw of one of the kinds built on no other (`p`: its parameters, defaults filled in)."""
    work = torch.float64 if dtype == torch.float64 else torch.float32
    if kind == "normal":
        return torch.randn(shape, generator=gen, device=on, dtype=work) * float(p["std"]) + float(p["mean"])
    if kind == "uniform":
        return torch.rand(shape, generator=gen, device=on, dtype=work) * (float(p["high"]) - float(p["low"])) + float(
            p["low"]
        )
    if kind == "randint":
        high = dims[p["high"]] if isinstance(p["high"], str) else int(p["high"])
        return torch.randint(int(p["low"]), high, shape, generator=gen, device=on, dtype=torch.int64)
    if kind == "permutation":  # distinct values: slots a scatter writes once each
        low, high = int(p["low"]), dims[p["high"]] if isinstance(p["high"], str) else int(p["high"])
        count = math.prod(shape)
        if count > high - low:
            raise ValueError(f"a permutation of [{low}, {high}) has fewer than {count} distinct values")
        order = torch.randperm(high - low, generator=gen, device=on, dtype=torch.int64)
        return (order[:count] + low).reshape(shape)
    if kind == "arange":  # start + step * ((i mod period) // divisor): a range per row, a page per block
        ramp = torch.arange(math.prod(shape), device=on, dtype=torch.float64)  # exact to 2**53
        for key in ("period", "divisor"):
            value = p.get(key)
            if value is not None:
                size = dims[value] if isinstance(value, str) else int(value)
                ramp = ramp.remainder(size) if key == "period" else ramp.div(size, rounding_mode="floor")
        return (ramp * float(p["step"]) + float(p["start"])).reshape(shape)
    if kind == "wide":
        sign = torch.randint(0, 2, shape, generator=gen, device=on).to(work) * 2 - 1
        exponent = torch.rand(shape, generator=gen, device=on, dtype=work) * (
            float(p["high"]) - float(p["low"])
        ) + float(p["low"])
        return sign * torch.pow(10.0, exponent)
    if kind == "large":
        return torch.randn(shape, generator=gen, device=on, dtype=work) * float(p["scale"])
    if kind == literal.KIND:  # the declared values (task/literal.py): no draw, the same for a hidden copy
        exact = torch.int64 if not dtype.is_floating_point else torch.float64  # ints beyond 2**53 stay exact
        return torch.tensor(p["values"], device=on, dtype=exact).reshape(shape)
    if kind == "constant":
        return torch.full(shape, float(p["value"]), device=on, dtype=work)
    if kind == "half_normal":  # |N(0, std)| + low: magnitudes, e.g. scales and routing weights
        return torch.randn(shape, generator=gen, device=on, dtype=work).abs() * float(p["std"]) + float(p["low"])
    raise ValueError(f"unknown distribution kind {kind!r}")


def _tril_mask(shape: tuple[int, ...], p: Mapping[str, float | int | str], on: torch.device) -> torch.Tensor:
    """1 where a tril keeps the draw, 0 elsewhere, broadcast over the other axes; built on `on`."""
    rows, cols = int(p["rows"]) % len(shape), int(p["cols"]) % len(shape)
    index = torch.arange(shape[rows], device=on) % max(shape[cols], 1)  # each block of n_cols rows starts over
    keep = torch.arange(shape[cols], device=on)[None, :] <= index[:, None] + int(p.get("diagonal", 0))
    view = [1] * len(shape)
    view[rows], view[cols] = shape[rows], shape[cols]
    return (keep if rows < cols else keep.T).reshape(view)
