"""Parsing of the test-vector fields: inputs, outputs, scalars, cases and their distributions."""

from __future__ import annotations

from typing import Any, Mapping

from arena.task import derived, literal, mapped
from arena.task.checks import (
    FieldError,
    require_bool,
    require_dict,
    require_identifier,
    require_int,
    require_keys,
    require_number,
    require_str,
)
from arena.task.task import CASE_DTYPE, DTYPES, FLOAT_DTYPES, Case, Distribution, TensorSpec

# Parameters each distribution kind takes; the ones listed in _REQUIRED must be given.
DISTRIBUTION_PARAMS: Mapping[str, tuple[str, ...]] = {
    "normal": ("mean", "std"),
    "uniform": ("low", "high"),
    "randint": ("low", "high"),
    "wide": ("low", "high"),
    "large": ("scale",),
    "constant": ("value",),
    "permutation": ("low", "high"),  # distinct ints: the first numel of a shuffled [low, high)
    "arange": ("start", "step", "period", "divisor"),  # start + step * ((i mod period) // divisor)
    "half_normal": ("std", "low"),  # |N(0, std)| + low
    "cumsum": ("base", "dim"),  # running sums along dim of a draw of `base`, with base's parameters
    "tril": ("base", "rows", "cols", "diagonal"),  # a draw of `base` zeroed above a diagonal, per block
    derived.KIND: derived.PARAMS,  # computed from another input: running sums of its values (derived.py)
    literal.KIND: literal.PARAMS,  # given in the declaration: the tensor's values as (nested) lists (literal.py)
}
# The kinds a cumsum sums or a tril masks: independent elements, one parameter set for the tensor.
BASE_KINDS = ("normal", "uniform", "half_normal", "randint", "constant")
_REQUIRED = {
    "randint": ("low", "high"),
    "constant": ("value",),
    "permutation": ("low", "high"),
    "cumsum": ("base", "dim"),
    "tril": ("base", "rows", "cols"),
}
_OWN = {"cumsum": ("base", "dim"), "tril": ("base", "rows", "cols", "diagonal")}  # the rest are the base's
_INTEGER_KINDS = ("randint", "permutation")  # their bounds are ints, and high may name a dim
# A parameter that is a positive int or names a dim: an integer kind's high, an arange's period.
_DIM_PARAMS = {"randint": ("high",), "permutation": ("high",), "arange": ("period", "divisor")}
# A masked write after the draw (`t[torch.rand(...) < p] = v`): a share `masked` of the elements,
# chosen by the draw's own generator, set to `mask_value` (a number, or "nan" for a float tensor).
MASK_PARAMS = ("masked", "mask_value")
MASKED_KINDS = ("normal", "uniform", "randint", "half_normal")
_INT_RANGES = {"int8": (-(2**7), 2**7 - 1), "uint8": (0, 255), "int16": (-(2**15), 2**15 - 1)}
_INT_RANGES |= {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
NAN = "nan"  # how a declaration writes a NaN mask_value (JSON and the BUILD's Python have no NaN literal)


def parse_distribution(field: str, raw: Any, what: str) -> Distribution:
    raw = require_dict(field, raw, what)
    kind = raw.get("kind")
    if kind not in DISTRIBUTION_PARAMS:
        raise FieldError(field, f"{what} has kind {kind!r}; expected one of {', '.join(DISTRIBUTION_PARAMS)}")
    if kind in _OWN:
        return _parse_based(field, raw, what, kind)
    if kind == derived.KIND:
        return derived.parse(field, raw, what)
    if kind == literal.KIND:
        return literal.parse(field, raw, what)
    allowed = DISTRIBUTION_PARAMS[kind] + (MASK_PARAMS if kind in MASKED_KINDS else ())
    allowed += mapped.PARAMS if kind in mapped.KINDS else ()
    require_keys(field, raw, f"{what} ({kind})", ("kind",) + _REQUIRED.get(kind, ()), allowed)
    params = {key: value for key, value in raw.items() if key != "kind"}
    _check_mask(field, params, what)
    if any(key in params for key in MASK_PARAMS) and any(key in params for key in mapped.PARAMS):
        raise FieldError(field, f"{what}: a masked write and then or normalize do not go together")
    for key, value in params.items():
        if key in MASK_PARAMS or key in mapped.PARAMS:
            continue
        if key in _DIM_PARAMS.get(kind, ()) and isinstance(value, str):
            require_identifier(field, value, f"{what} {key} (a dim name)")
        elif key in ("period", "divisor"):
            require_int(field, value, f"{what} {key}", minimum=1)
        elif kind in _INTEGER_KINDS:
            require_int(field, value, f"{what} {key}")
        else:
            require_number(field, value, f"{what} {key}")
    low, high = params.get("low"), params.get("high")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and not low < high:
        raise FieldError(field, f"{what} needs low < high, got {low} and {high}")
    if kind in ("normal", "half_normal") and params.get("std", 1) <= 0:
        raise FieldError(field, f"{what} needs std > 0")
    if kind == "arange" and params.get("step", 1) == 0:
        raise FieldError(field, f"{what} needs a step other than 0")
    mapped.check(field, kind, params, what)
    if mapped.THEN in params:
        params[mapped.THEN] = list(params[mapped.THEN])
    return Distribution(kind=kind, params=params)


def _check_mask(field: str, params: Mapping[str, Any], what: str) -> None:
    """`masked` (a share strictly between 0 and 1) and `mask_value` (a finite number or "nan") come together."""
    given = [key for key in MASK_PARAMS if key in params]
    if not given:
        return
    if len(given) == 1:
        raise FieldError(field, f"{what} needs masked and mask_value together, got only {given[0]}")
    share = require_number(field, params["masked"], f"{what} masked")
    if not 0 < share < 1:
        raise FieldError(field, f"{what} masked is the share of elements set, strictly between 0 and 1, got {share}")
    value = params["mask_value"]
    if isinstance(value, str) and value != NAN:
        raise FieldError(field, f'{what} mask_value is a finite number or "nan", got {value!r}')
    if value != NAN:
        require_number(field, value, f"{what} mask_value")


def _parse_based(field: str, raw: Mapping[str, Any], what: str, kind: str) -> Distribution:
    """{"kind": "cumsum", "base": <kind>, "dim": <int>, ...the base's parameters}, and a tril's
    {"kind": "tril", "base": <kind>, "rows": <int>, "cols": <int>[, "diagonal": <int>], ...}."""
    require_keys(field, raw, f"{what} ({kind})", ("kind",) + _REQUIRED[kind], raw)  # the base checks the rest
    base = raw["base"]
    if base not in BASE_KINDS:
        raise FieldError(field, f"{what} has base {base!r}; expected one of {', '.join(BASE_KINDS)}")
    own = {key: require_int(field, raw[key], f"{what} {key}") for key in _OWN[kind][1:] if key in raw}
    if kind == "tril" and own["rows"] == own["cols"]:
        raise FieldError(field, f"{what} needs two axes, rows and cols, got {own['rows']} for both")
    rest = {key: value for key, value in raw.items() if key != "kind" and key not in _OWN[kind]}
    if any(key in rest for key in MASK_PARAMS):
        raise FieldError(
            field, f"{what}: a {kind} is not masked (masked and mask_value are for {', '.join(MASKED_KINDS)})"
        )
    if any(key in rest for key in mapped.PARAMS):
        raise FieldError(field, f"{what}: a {kind} takes no then or normalize (they are for {', '.join(mapped.KINDS)})")
    inner = parse_distribution(field, {"kind": base, **rest}, f"{what} base")
    return Distribution(kind=kind, params={"base": base, **own, **inner.params})


def base_distribution(dist: Distribution) -> Distribution:
    """The distribution a cumsum sums or a tril masks (itself for any other kind)."""
    if dist.kind not in _OWN:
        return dist
    return Distribution(
        kind=str(dist.params["base"]), params={k: v for k, v in dist.params.items() if k not in _OWN[dist.kind]}
    )


def parse_tensors(field: str, raw: Any, *, with_dist: bool) -> tuple[TensorSpec, ...]:
    if not isinstance(raw, (list, tuple)):
        raise FieldError(field, f"expected a list of tensor dicts, got {raw!r}")
    specs = []
    for index, item in enumerate(raw):
        what = f"{field[:-1]} {index}"
        item = require_dict(field, item, what)
        require_keys(field, item, what, ("name", "shape"), ("dtype", "dist") if with_dist else ("dtype",))
        name = require_identifier(field, item["name"])
        what = f"{field[:-1]} {name!r}"
        shape = item["shape"]
        if not isinstance(shape, (list, tuple)):
            raise FieldError(field, f"{what} shape must be a list, got {shape!r}")
        for dim in shape:
            if isinstance(dim, str):
                require_identifier(field, dim, f"{what} dim")
            else:
                require_int(field, dim, f"{what} dim", minimum=0)
        dtype = item.get("dtype", CASE_DTYPE)
        if dtype != CASE_DTYPE and dtype not in DTYPES:
            raise FieldError(field, f"{what} dtype {dtype!r} is not one of {', '.join(DTYPES)} or {CASE_DTYPE}")
        dist = parse_distribution(field, item["dist"], f"{what} dist") if "dist" in item else Distribution()
        specs.append(TensorSpec(name=name, shape=tuple(shape), dtype=dtype, dist=dist))
    return tuple(specs)


def parse_outputs(raw: Any, inputs: tuple[TensorSpec, ...]) -> tuple[TensorSpec, ...]:
    """The outputs: tensor dicts as parse_tensors reads them, or {"name": <an input>, "inplace":
    True}: that input as the kernel leaves it (its shape and dtype), compared like any output."""
    if not isinstance(raw, (list, tuple)):
        raise FieldError("outputs", f"expected a list of tensor dicts, got {raw!r}")
    by_name = {spec.name: spec for spec in inputs}
    specs: list[TensorSpec] = []
    for index, item in enumerate(raw):
        if not (isinstance(item, dict) and "inplace" in item):
            specs.extend(parse_tensors("outputs", [item], with_dist=False))
            continue
        what = f"output {item.get('name', index)!r}"
        require_keys("outputs", item, what, ("name", "inplace"), ())
        if not require_bool("outputs", item["inplace"], f"{what} inplace"):
            raise FieldError("outputs", f"{what}: inplace, when given, is True (leave it out otherwise)")
        source = by_name.get(item["name"])
        if source is None:
            raise FieldError("outputs", f"{what} is inplace but no input has its name")
        if any(spec.name == source.name for spec in specs):
            raise FieldError("outputs", f"name {source.name!r} is used twice")
        specs.append(TensorSpec(name=source.name, shape=source.shape, dtype=source.dtype, inplace=True))
    return tuple(specs)


def parse_scalars(raw: Any) -> dict[str, float | int | str]:
    """A number, a dim's name, or True/False (a flag passed by name: a HIP launcher gets int64_t 0 or 1)."""
    raw = require_dict("scalars", raw)
    for name, value in raw.items():
        require_identifier("scalars", name)
        if isinstance(value, str):
            require_identifier("scalars", value, f"scalar {name!r} value (a dim name)")
        elif not isinstance(value, bool):
            require_number("scalars", value, f"scalar {name!r}")
    return dict(raw)


def parse_cases(raw: Any, input_names: set[str]) -> tuple[Case, ...]:
    if not isinstance(raw, (list, tuple)) or not raw:
        raise FieldError("cases", "expected a non-empty list of case dicts")
    cases: list[Case] = []
    for index, item in enumerate(raw):
        item = require_dict("cases", item, f"case {index}")
        name = require_str("cases", item.get("name"), empty=False) if "name" in item else ""
        what = f"case {name!r}" if name else f"case {index}"
        require_keys("cases", item, what, ("name", "dims", "dtype", "seed"), ("timed", "weight", "dists"))
        if any(case.name == name for case in cases):
            raise FieldError("cases", f"case name {name!r} is used twice")
        dims = require_dict("cases", item["dims"], f"{what} dims")
        for dim, value in dims.items():
            require_identifier("cases", dim, f"{what} dim")
            if isinstance(value, float):  # a case value: only scalars may name it (check_dims_defined)
                require_number("cases", value, f"{what} dim {dim!r}")
            else:
                require_int("cases", value, f"{what} dim {dim!r}", minimum=0)
        if item["dtype"] not in DTYPES:
            raise FieldError("cases", f"{what} dtype {item['dtype']!r} is not one of {', '.join(DTYPES)}")
        weight = require_number("cases", item.get("weight", 1.0), f"{what} weight")
        if weight <= 0:
            raise FieldError("cases", f"{what} weight must be > 0, got {weight}")
        dists = {}
        for input_name, dist in require_dict("cases", item.get("dists", {}), f"{what} dists").items():
            if input_name not in input_names:
                raise FieldError("cases", f"{what} dists names {input_name!r}, which is not an input")
            dists[input_name] = parse_distribution("cases", dist, f"{what} dist for {input_name!r}")
        cases.append(
            Case(
                name=name,
                dims=dict(dims),
                dtype=item["dtype"],
                seed=require_int("cases", item["seed"], f"{what} seed"),
                timed=require_bool("cases", item.get("timed", False), f"{what} timed"),
                weight=float(weight),
                dists=dists,
            )
        )
    if not any(case.timed for case in cases):
        raise FieldError("cases", 'at least one case must be timed ("timed": True)')
    return tuple(cases)


def check_dims_defined(cases: tuple[Case, ...], tensors: tuple[TensorSpec, ...], scalars: Mapping[str, Any]) -> None:
    """Every dim a shape, a randint or permutation bound or a scalar names is set in every case, and
    a permutation's range holds as many distinct values as its tensor has elements. A dim that is
    a float in some case (a case value: a float scalar that differs by case) is named by scalars
    only: a shape or a bound that names it is refused."""
    floats = {dim for case in cases for dim, value in case.dims.items() if isinstance(value, float)}
    for case in cases:
        for spec in tensors:
            dists = [spec.dist, case.dists.get(spec.name)]
            bases = [base_distribution(d) for d in dists if d]
            bounds = [d.params.get(key) for d in bases for key in _DIM_PARAMS.get(d.kind, ())]
            bounds = [b for b in bounds if isinstance(b, str)]
            for dim in [d for d in spec.shape if isinstance(d, str)] + bounds:
                if dim not in case.dims:
                    raise FieldError(
                        "cases", f"case {case.name!r} uses dim {dim!r} not set in its dims (by {spec.name!r})"
                    )
                if dim in floats:
                    raise FieldError(
                        "cases", f"dim {dim!r} is a float in some case; only a scalar may name it, not {spec.name!r}"
                    )
        check_permutations(case, tensors)
        check_periods(case, tensors)
        check_axes(case, tensors)
        check_masks(case, tensors)
        mapped.check_case(case, tensors)
        literal.check(case, tensors, _INT_RANGES)
        derived.check(case, tensors)  # inputs come first: a derived input's source is one declared before it
        for name, value in scalars.items():
            if isinstance(value, str) and value not in case.dims:
                raise FieldError(
                    "cases", f"case {case.name!r} uses dim {value!r} not set in its dims (by scalar {name!r})"
                )


def check_axes(case: Case, tensors: tuple[TensorSpec, ...]) -> None:
    """Each cumsum- or tril-drawn tensor of `case` has the axes its distribution names, two
    different ones for a tril."""
    for spec in tensors:
        dist = case.dists.get(spec.name, spec.dist)
        rank = len(spec.shape)
        axes = [int(dist.params[key]) for key in _OWN.get(dist.kind, ())[1:3] if key in dist.params]
        for axis in axes:
            if not -rank <= axis < max(rank, 1):
                raise FieldError(
                    "cases",
                    f"case {case.name!r}: {spec.name!r} is drawn along dim {axis}, which its {rank}-dim shape "
                    "does not have",
                )
        if len(axes) == 2 and axes[0] % rank == axes[1] % rank:
            raise FieldError("cases", f"case {case.name!r}: {spec.name!r}'s tril rows and cols are one axis")


def check_masks(case: Case, tensors: tuple[TensorSpec, ...]) -> None:
    """A masked write's value fits the tensor of `case`: NaN only in a float tensor, an integer in
    an integer one (a bool tensor is not masked)."""
    for spec in tensors:
        dist = case.dists.get(spec.name, spec.dist)
        if "mask_value" not in dist.params:
            continue
        dtype = case.dtype if spec.dtype == CASE_DTYPE else spec.dtype
        value = dist.params["mask_value"]
        if dtype == "bool":
            raise FieldError("cases", f"case {case.name!r}: {spec.name!r} is bool; a masked write is for numbers")
        if dtype in FLOAT_DTYPES:
            continue
        low, high = _INT_RANGES[dtype]
        if value == NAN or not float(value).is_integer() or not low <= int(value) <= high:
            raise FieldError(
                "cases",
                f"case {case.name!r}: {spec.name!r} is {dtype}, and its mask_value {value!r} is not an {dtype} value",
            )


def check_periods(case: Case, tensors: tuple[TensorSpec, ...]) -> None:
    """Each arange of `case` whose period or divisor names a dim has it at least 1 there."""
    for spec in tensors:
        dist = case.dists.get(spec.name, spec.dist)
        for key in ("period", "divisor") if dist.kind == "arange" else ():
            dim = dist.params.get(key)
            if isinstance(dim, str) and not case.dims[dim] >= 1:
                raise FieldError(
                    "cases",
                    f"case {case.name!r}: {spec.name!r} is an arange of {key} {dim} = {case.dims[dim]}, not >= 1",
                )


def check_permutations(case: Case, tensors: tuple[TensorSpec, ...]) -> None:
    """Each permutation-drawn tensor of `case` has no more elements than its range has values."""

    def value(v: Any) -> int:
        return case.dims[v] if isinstance(v, str) else int(v)

    for spec in tensors:
        dist = case.dists.get(spec.name, spec.dist)
        if dist.kind != "permutation":
            continue
        numel = 1
        for d in spec.shape:
            numel *= value(d)
        span = value(dist.params["high"]) - value(dist.params["low"])
        if numel > span:
            raise FieldError(
                "cases",
                f"case {case.name!r}: {spec.name!r} has {numel} elements, more than the {span} distinct values "
                "its permutation can draw",
            )
