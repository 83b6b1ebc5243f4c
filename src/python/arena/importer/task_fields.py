"""From the followed cases of a test loop to what a kernel_task declares: dims, inputs, scalars,
the outputs, cases and the tolerances (docs/task-format.md).

A shape is named by the test's own dim names where it uses them (`torch.randn(rows, hidden)`);
an axis the test computes gets a dim of its own (`x_0`), set in every case to the value the
test gives it, so each case keeps exactly the shapes the original test ran.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from arena.importer.calls import is_call_with_one_argument
from arena.importer.correctness import Comparison, TestLoop, written_names
from arena.importer.draws import Draw, distribution, find_draw, normalized_axis, with_mapped
from arena.importer.follow import FollowedCase, same_in_every_case
from arena.importer.outcome import (
    KernelCallNotRead,
    NotDrawn,
    NotFollowed,
    NotHeld,
    PartialCheck,
    ToleranceNotHeld,
)
from arena.importer.triangle import Triangle, masked, read_triangle
from arena.importer.values import Tensor, Unknown, describe, same_value
from arena.task import mapped
from arena.task.task import CASE_DTYPE, DTYPES, FLOAT_DTYPES, INT_DTYPES
from arena.task.vectors import BASE_KINDS, MASKED_KINDS, NAN

_PASSED_AS_IS = ("clone", "contiguous")  # a kernel argument `x.clone()` is the input x
_SAME_VALUES = _PASSED_AS_IS + ("to",)  # `x = x.to(torch.float16)` keeps the draw of x
_DEFAULT_TOLERANCES = {"allclose": (1e-8, 1e-5), "equal": (0.0, 0.0)}  # (atol, rtol); assert_close: arena's
# The largest magnitude of each integer dtype: a tolerance of atol + rtol * this below 1 accepts no difference.
_INT_MAGNITUDES = {"bool": 1, "int8": 128, "uint8": 255, "int16": 2**15, "int32": 2**31, "int64": 2**63}


@dataclass(frozen=True)
class TensorField:
    name: str
    shape: tuple[str | int, ...]
    dtype: str
    dist: dict[str, Any] | None = None  # inputs only
    inplace: bool = False  # outputs only: the input of this name, as the kernel leaves it
    copy_of: tuple[str, ...] = ()  # inputs only: the test's names this input is a copy of (`x_k = x.clone()`)
    cast_of: tuple[str, ...] = ()  # inputs only: the test's names this input is a cast of (`a = a_f.to(fp16)`)
    case_dists: tuple[dict[str, Any], ...] = ()  # inputs only: each case's distribution, when they differ
    case_dtypes: tuple[str, ...] = ()  # each case's dtype, when it differs between cases (dtype `$dtype`)
    # inputs only: the test's list this input is `torch.tensor(<list>, dtype=<an integer dtype>)` of
    # (a `values` literal), which the reference may read as the input's `.tolist()`
    literal_of: str | None = None

    def declared(self) -> dict[str, Any]:
        if self.inplace:
            return {"name": self.name, "inplace": True}
        declared: dict[str, Any] = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype}
        return declared | ({"dist": self.dist} if self.dist is not None else {})


@dataclass(frozen=True)
class ScalarField:
    param: str  # the keyword the harness passes it as (the kernel function's parameter)
    value: str | int | float  # a dim name, or a number
    test_name: str | None  # the name the test gives it, when it passes a name


@dataclass(frozen=True)
class TaskFields:
    """What the test says about the task, ready to declare."""

    function: str  # the kernel function the test calls
    inputs: tuple[TensorField, ...]
    scalars: tuple[ScalarField, ...]
    outputs: tuple[TensorField, ...]  # in the order the kernel returns them
    dims: tuple[dict[str, int | float], ...]  # per case, only the dims something uses (a float: a case value)
    seeds: tuple[int, ...]
    tolerances: dict[str, dict[str, float]]  # by dtype, {"atol", "rtol"}; a dtype left out: arena's default
    dim_names: frozenset[str]  # every dim of the cases (loop values the reference may use)
    # every output written in place, and the kernel also returns what the test ignores
    return_ignored: bool = False
    # the call's positional arguments in order (input names, scalar params), where a tensor comes
    # after a non-tensor one; empty: the inputs first, the scalars by name
    abi: tuple[str, ...] = ()
    # each case's dtype, where the float tensors declared `$dtype` have one that differs by case
    case_dtypes: tuple[str, ...] = ()


class _Dims:
    """Dims by name with their value in each case; the ones used go into the cases."""

    def __init__(self, cases: Sequence[FollowedCase], loop: TestLoop) -> None:
        self.count = len(cases)
        skipped = {loop.index, loop.module_name, *loop.result_names}
        names = [n for n in cases[0].scope.names if n not in skipped and not n.startswith("_")]
        self.values: dict[str, list[Any]] = {  # ints; floats for a float scalar that differs by case
            name: [case.scope.names[name] for case in cases]
            for name in names
            if all(_is_int(case.scope.names.get(name)) for case in cases)
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
        if isinstance(node, ast.Constant) and _is_int(node.value) and all(v == node.value for v in values):
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


def read_task_fields(loop: TestLoop, cases: list[FollowedCase], function: ast.FunctionDef) -> TaskFields:
    dims = _Dims(cases, loop)
    inputs, scalar_arguments = _inputs(loop, cases, dims)
    _check_sources(inputs)
    dims.taken |= {field.name for field in inputs}
    tensors = [p for p in range(len(loop.kernel_call.args)) if p not in scalar_arguments]
    interleaved = bool(scalar_arguments) and max(tensors) > min(scalar_arguments)
    scalars = _scalars(loop, cases, dims, function, scalar_arguments, keep_positional=interleaved)
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    names = iter(field.name for field in inputs)
    abi = tuple(params[p] if p in scalar_arguments else next(names) for p in range(len(loop.kernel_call.args)))
    taken = {field.name for field in inputs} | {s.param for s in scalars}
    outputs: list[TensorField] = []
    for position in range(len(loop.comparisons)):
        if loop.result_names[position] in loop.written:
            outputs.append(_written(loop, cases, inputs, position))
        else:
            outputs.append(_output(loop, cases, dims, position, taken | {field.name for field in outputs}))
    seeds = tuple(case.seed if case.seed is not None else 1000 + case.index for case in cases)
    case_dtypes = case_dtypes_of(inputs + tuple(outputs))
    return TaskFields(
        function=loop.function_name,
        inputs=inputs,
        scalars=scalars,
        outputs=tuple(outputs),
        dims=dims.per_case(),
        seeds=seeds,
        tolerances=_tolerances(loop, cases, outputs),
        dim_names=frozenset(dims.values),
        return_ignored=any(case.returned for case in cases),
        abi=abi if interleaved else (),
        case_dtypes=case_dtypes,
    )


def _check_sources(inputs: tuple[TensorField, ...]) -> None:
    """An input computed from another (`dA_cumsum = torch.cumsum(dt * -0.1, dim=-1)`: cumsum_of)
    names an input the kernel is given before it, of its shape, itself drawn; the harness computes
    it from that input's values (arena/task/derived.py)."""
    for position, field in enumerate(inputs):
        for dist in (field.dist, *field.case_dists):
            if dist is None or dist["kind"] != "cumsum_of":
                continue
            source = next((f for f in inputs[:position] if f.name == dist["input"]), None)
            shown = f"input {field.name!r} is the running sums of {dist['input']!r}"
            if source is None:
                raise NotDrawn(f"{shown}, which the kernel is not given before it (arena computes it from one)")
            if source.shape != field.shape or (source.dist or {}).get("kind") == "cumsum_of":
                raise NotDrawn(f"{shown}, which is not a drawn input of its shape")


def case_dtypes_of(fields: tuple[TensorField, ...]) -> tuple[str, ...]:
    """Each case's dtype, where tensors have one that differs by case (declared `$dtype`): the same
    in each such tensor (arena has one per case); () when every dtype is the same in every case."""
    varying = {field.case_dtypes for field in fields if field.case_dtypes}
    if not varying:
        return ()
    if len(varying) > 1:
        shown = ", ".join(f"{field.name!r}" for field in fields if field.case_dtypes)
        raise NotHeld(f"tensors {shown} have dtypes that differ between cases, not alike; arena has one per case")
    return varying.pop()


def _inputs(loop: TestLoop, cases: list[FollowedCase], dims: _Dims) -> tuple[tuple[TensorField, ...], list[int]]:
    """The tensor arguments as inputs, in the call's order; the positions of the other arguments."""
    fields: list[TensorField] = []
    others: list[int] = []
    for position, node in enumerate(loop.kernel_call.args):
        values = [case.arguments[position] for case in cases]
        # An argument the reading cannot follow is most often a tensor built some other way:
        # read as an input, it is refused with the expression that builds it.
        if not any(isinstance(value, (Tensor, Unknown)) for value in values):
            others.append(position)
            continue
        fields.append(_input(loop, cases, dims, node, values, {f.name for f in fields}))
    for keyword in loop.kernel_call.keywords:
        if any(isinstance(case.keywords.get(keyword.arg or "**"), Tensor) for case in cases):
            raise KernelCallNotRead(f"tensor {keyword.arg}= is passed by keyword; arena passes inputs by position")
    if not fields:
        raise KernelCallNotRead(f"`{loop.function_name}` is given no tensor")
    return tuple(fields), others


def _input(
    loop: TestLoop, cases: list[FollowedCase], dims: _Dims, node: ast.expr, values: list[Any], seen: set[str]
) -> TensorField:
    """The input the kernel call passes as `node`: its draw, read back from the loop (through copies,
    casts, a normalization, a triangle mask and writes through a mask), its shape in dims and its
    dtype from the values the cases gave it."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PASSED_AS_IS:
        node = node.func.value
    shown = ast.unparse(node)
    if not isinstance(node, ast.Name) or node.id in seen:
        raise KernelCallNotRead(f"kernel argument `{shown}` is not one named tensor")
    writes: list[MaskWrite] = []
    assignment, copy_of, cast_of = _through_copies(loop, cases, node, values, seen, writes)
    axis, triangle, assignment = _before_reshaping(loop, cases, node, values, assignment)
    draw = find_draw(node.id, assignment)
    tensors = _tensors(values, f"input {shown!r}")
    dist, case_dists = _distributions(draw, node.id, cases, shown)
    if axis is not None:
        along = _same_reader(cases, f"input {shown!r}: the axis it is normalized along")(axis)
        if isinstance(along, bool) or not isinstance(along, int):
            raise NotDrawn(f"input {shown!r} is normalized along `{ast.unparse(axis)}`, not one axis")
        dist = with_mapped(dist, node.id, normalize=along)
        case_dists = tuple(with_mapped(d, node.id, normalize=along) for d in case_dists)
    if triangle is not None:
        dist = _tril(dist, triangle, shown)
        case_dists = tuple(_tril(d, triangle, shown) for d in case_dists)
    if writes:  # `x[torch.rand(...) < p] = v` after the draw
        if copy_of or triangle is not None:
            raise NotDrawn(f"input {shown!r} is written through a mask and also copied or masked to a triangle")
        dist = _masked(dist, writes, cases, tensors, shown)
        case_dists = tuple(_masked(d, writes, cases, tensors, shown) for d in case_dists)
    case_dists = _bounded(dist, case_dists, cases, dims)
    shape = _shape(draw, tensors, dims, node.id)
    for key in ("period", "divisor") if dist["kind"] == "arange" else ():  # `% p`, `// d`: a dim or an int
        if key in dist:
            dist[key] = _period(cases, dims, dist[key], shape, tensors, node.id, key)
            case_dists = tuple({**d, key: dist[key]} for d in case_dists)
    dtype, case_dtypes = _dtype(tensors, f"input {shown!r}")
    data = draw.call.args[0] if draw.kind == "tensor" and draw.wrapped is None and draw.call.args else None
    return TensorField(
        node.id,
        tuple(shape),
        dtype,
        dist,
        copy_of=tuple(copy_of),
        cast_of=tuple(cast_of),
        case_dists=case_dists if any(d != dist for d in case_dists) else (),
        case_dtypes=case_dtypes,
        literal_of=data.id if isinstance(data, ast.Name) and dtype in INT_DTYPES and not copy_of else None,
    )


def _through_copies(
    loop: TestLoop,
    cases: list[FollowedCase],
    node: ast.Name,
    values: list[Any],
    seen: set[str],
    writes: list[MaskWrite],
) -> tuple[ast.expr, list[str], list[str]]:
    """The expression `node`'s value comes from, followed through copies (`q_k = q.clone()`: the draw
    of q, which the reference reads as q) and casts (`a = a_f.to(torch.float16)`); the names copied
    and those cast. `writes` gets the writes through a mask after the draw. NotDrawn where the
    value is not drawn in the loop, or comes from a statement no distribution matches."""
    shown = ast.unparse(node)
    assignment = _last_assignment(loop, node.id, writes=writes)
    copy_of: list[str] = []
    cast_of: list[str] = []
    while isinstance(assignment, ast.expr) and isinstance(source := _copied(assignment), ast.Name):
        if source.id in seen or source.id in copy_of or source.id == node.id:
            raise NotDrawn(f"input {shown!r} is a copy of {source.id!r}; arena draws each input on its own")
        copy_of.append(source.id)
        if any(_dtype_of(case.scope.names.get(source.id)) != _dtype_of(value) for case, value in zip(cases, values)):
            cast_of.append(source.id)  # other values than the source's
        assignment = _last_assignment(loop, source.id)
    if assignment is None:
        raise NotDrawn(f"input {shown!r} is not drawn inside the test loop")
    if isinstance(assignment, ast.stmt):
        first = ast.unparse(assignment).splitlines()[0][:70]
        how = "comes from" if isinstance(assignment, ast.Assign) else f"is written by line {assignment.lineno},"
        raise NotDrawn(f"input {shown!r} {how} `{first}`, which no arena distribution matches")
    return assignment, copy_of, cast_of


def _before_reshaping(
    loop: TestLoop, cases: list[FollowedCase], node: ast.Name, values: list[Any], assignment: ast.expr
) -> tuple[ast.expr | None, Triangle | None, ast.expr]:
    """(the axis `node` is normalized along, the triangle it is masked to, the draw before both):
    `p = p / p.sum(-1, keepdim=True)` is p's earlier draw normalized along -1; `A = A * mask[...]`
    a tril of A's draw (checked against the cases' values)."""
    shown = ast.unparse(node)
    axis = normalized_axis(node.id, assignment)
    if axis is not None:
        earlier = _value(_last_assignment(loop, node.id, before=assignment))
        if earlier is None:
            raise NotDrawn(f"input {shown!r} is `{ast.unparse(assignment)[:60]}` of values no draw makes")
        assignment = earlier
    triangle: Triangle | None = None
    if masked(node.id, assignment) is not None:
        tensors = _tensors(values, f"input {shown!r}")
        earlier = _value(_last_assignment(loop, node.id, before=assignment))
        triangle = read_triangle(
            node.id, assignment, lambda n: _value(_last_assignment(loop, n)), len(tensors[0].shape), earlier
        )
        _check_triangle(triangle, cases, tensors, shown)
        assignment = triangle.base
    return axis, triangle, assignment


def _distributions(
    draw: Draw, name: str, cases: list[FollowedCase], shown: str
) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """The draw's distribution, and each case's own where a parameter differs between cases
    (`torch.full((b,), seq_len // 2)`: the first case's, each case's as its `dists` override)."""
    try:
        return distribution(draw, name, _same_reader(cases, f"input {shown!r}:")), ()
    except _Differs:
        case_dists = tuple(distribution(draw, name, _case_reader(case, shown)) for case in cases)
        return dict(case_dists[0]), case_dists


def _bounded(
    dist: dict[str, Any], case_dists: tuple[dict[str, Any], ...], cases: list[FollowedCase], dims: _Dims
) -> tuple[dict[str, Any], ...]:
    """An integer draw's upper bound, in `dist`, as a dim, a number or (a bound no dim names that
    differs between cases, `max_tokens + 1`) each case's own number: validation moves an odd dim
    alone (variants.py), which would draw values past the sizes the bound was computed from."""
    if not (dist["kind"] in ("randint", "permutation") or dist.get("base") == "randint"):
        return case_dists
    high = _bound_values(cases, dims, dist["high"])
    if isinstance(high, list):
        dist["high"] = high[0]
        return tuple({**d, "high": h} for d, h in zip(case_dists or (dist,) * len(cases), high))
    dist["high"] = high
    return tuple({**d, "high": high} for d in case_dists)


def _shape(draw: Draw, tensors: list[Tensor], dims: _Dims, name: str) -> list[str | int]:
    """Each axis's dim: the one its size expression names, else one of the cases' sizes."""
    axes = draw.size_args
    if len(axes) == 1 and isinstance(axes[0], (ast.Tuple, ast.List)):
        axes = axes[0].elts  # torch.randn((m, n)): one tuple of sizes
    shape: list[str | int] = []
    for position in range(len(tensors[0].shape)):
        per_case = [tensor.shape[position] for tensor in tensors]
        named = dims.named(axes[position], per_case) if len(axes) == len(tensors[0].shape) else None
        if named is None:  # no size expression per axis (zeros_like, arange(a, b)): a dim of those values
            base = f"{name}_{position}"
            named = dims.matching(per_case, base, avoid=shape) if not axes else dims.new(base, per_case)
        shape.append(named)
    return shape


def _value(found: ast.expr | ast.stmt | None) -> ast.expr | None:
    return found if isinstance(found, ast.expr) else None


def _check_triangle(triangle: Triangle, cases: list[FollowedCase], tensors: list[Tensor], shown: str) -> None:
    """Each arange of the mask spans the axis it is placed on, in every case (and a row index not
    taken modulo spans no more than the columns): what makes the mask a tril of these axes."""
    for case, tensor in zip(cases, tensors):
        for size, axis in triangle.sizes:
            if not same_value(case.read(size), tensor.shape[axis]):
                raise NotDrawn(
                    f"input {shown!r}: its mask's `{ast.unparse(size)}` is not the size of its axis {axis} "
                    f"in case {case.index + 1}"
                )
        if triangle.within and tensor.shape[triangle.rows] > tensor.shape[triangle.cols]:
            raise NotDrawn(f"input {shown!r}: its mask's rows outnumber its columns, without a modulus")


def _tril(dist: dict[str, Any], triangle: Triangle, shown: str) -> dict[str, Any]:
    _not_mapped(dist, shown, "masked to a triangle")
    if dist["kind"] not in BASE_KINDS:
        raise NotDrawn(
            f"input {shown!r} masks a {dist['kind']} draw to a triangle; arena masks {', '.join(BASE_KINDS)}"
        )
    own = {
        "rows": triangle.rows,
        "cols": triangle.cols,
        **({"diagonal": triangle.diagonal} if triangle.diagonal else {}),
    }
    return {"kind": "tril", "base": dist["kind"], **own, **{k: v for k, v in dist.items() if k != "kind"}}


class _Differs(NotDrawn):
    """A distribution's parameter differs between cases (per-case `dists` declare it)."""


def _same_reader(cases: list[FollowedCase], what: str) -> Callable[[ast.expr], Any]:
    """The value `node` has in every case (follow.same_in_every_case), _Differs where it differs."""

    def read(node: ast.expr) -> Any:
        values = [case.read(node) for case in cases]
        if not any(isinstance(value, Unknown) for value in values) and not all(
            same_value(value, values[0]) for value in values
        ):
            raise _Differs(f"{what} `{ast.unparse(node)}` differs between cases")
        return same_in_every_case(cases, node, what)

    return read


def _case_reader(case: FollowedCase, shown: str) -> Callable[[ast.expr], Any]:
    def read(node: ast.expr) -> Any:
        value = case.read(node)
        if isinstance(value, Unknown):
            raise NotFollowed(f"input {shown!r}: `{ast.unparse(node)}` cannot be read: {value.reason}")
        return value

    return read


def _period(
    cases: list[FollowedCase],
    dims: _Dims,
    node: ast.expr,
    shape: list[str | int],
    tensors: list[Tensor],
    name: str,
    key: str = "period",
) -> str | int:
    """An arange's period (or divisor): the dim `node` names, else the axis of the tensor whose size
    it is in every case (`offsets[b, j] = j`: the last one), else a dim or an int of its values."""
    values = [case.read(node) for case in cases]
    if all(_is_int(value) and value >= 1 for value in values):
        named = dims.named(node, values)
        if named is not None:
            return named
        for position, axis in enumerate(shape):
            if all(tensor.shape[position] == value for tensor, value in zip(tensors, values)):
                return axis
    return _bound(cases, dims, node, f"{name}_{key}", f"the arange {key}")


def _bound(
    cases: list[FollowedCase], dims: _Dims, node: ast.expr, base: str, what: str = "the randint bound"
) -> str | int:
    found = _bound_values(cases, dims, node, what)
    return dims.new(base, found) if isinstance(found, list) else found


def _bound_values(
    cases: list[FollowedCase], dims: _Dims, node: ast.expr, what: str = "the randint bound"
) -> str | int | list[int]:
    """The dim naming the bound, else its one value, else its values, one per case."""
    values = [case.read(node) for case in cases]
    if not all(_is_int(value) for value in values):
        raise NotHeld(f"{what} `{ast.unparse(node)}` is not an integer in every case")
    if what != "the randint bound" and not all(value >= 1 for value in values):
        raise NotHeld(f"{what} `{ast.unparse(node)}` is below 1 in some case")
    named = dims.named(node, values)
    if named is not None or len(set(values)) == 1:
        return named if named is not None else values[0]
    return [int(value) for value in values]


def _scalars(
    loop: TestLoop,
    cases: list[FollowedCase],
    dims: _Dims,
    function: ast.FunctionDef,
    positions: list[int],
    keep_positional: bool = False,
) -> tuple[ScalarField, ...]:
    """The call's other arguments by parameter name; one equal to the function's default is left
    out, unless `keep_positional` and it is passed by position (the abi then names it)."""
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    defaults = _defaults(function)
    given: list[tuple[str, ast.expr, list[Any]]] = []
    for position in positions:
        if position >= len(params):
            raise KernelCallNotRead(f"`{loop.function_name}` takes its argument {position + 1} through *args")
        node = loop.kernel_call.args[position]
        given.append((params[position], node, [case.arguments[position] for case in cases]))
    positional = {param for param, _, _ in given} if keep_positional else set()
    takes = set(params) | {a.arg for a in function.args.kwonlyargs}
    for keyword in loop.kernel_call.keywords:
        if keyword.arg is None:
            raise KernelCallNotRead(f"`{loop.function_name}` is given **kwargs")
        if keyword.arg not in takes and function.args.kwarg is None:
            raise KernelCallNotRead(f"`{loop.function_name}` takes no argument {keyword.arg!r}")
        given.append((keyword.arg, keyword.value, [case.keywords[keyword.arg] for case in cases]))
    scalars = []
    for param, node, values in given:
        if param not in positional and param in defaults and all(same_value(v, defaults[param]) for v in values):
            continue  # the kernel's own default: nothing to pass
        scalars.append(_scalar(param, node, values, dims))
    return tuple(scalars)


def _scalar(param: str, node: ast.expr, values: list[Any], dims: _Dims) -> ScalarField:
    test_name = node.id if isinstance(node, ast.Name) else None
    for value in values:
        if isinstance(value, Unknown):
            raise NotFollowed(f"argument {param}=`{ast.unparse(node)}` cannot be read: {value.reason}")
        if not isinstance(value, (int, float)):  # a bool is an int: a flag, passed as the test passes it
            raise NotHeld(
                f"argument {param}={describe(value)} is not a number or a bool; "
                "arena scalars are numbers, dims or flags"
            )
    if any(isinstance(value, bool) for value in values):
        if not all(isinstance(value, bool) for value in values) or len(set(values)) > 1:
            raise NotHeld(f"argument {param}=`{ast.unparse(node)}` is a bool that differs between cases")
        return ScalarField(param, values[0], test_name)
    if all(_is_int(value) for value in values):
        named = dims.named(node, values)
        if isinstance(named, str) or len(set(values)) > 1:
            return ScalarField(param, named if isinstance(named, str) else dims.new(param, values), test_name)
    if len(set(values)) > 1:  # a float that differs by case: a case value of its own (a float dim)
        if not all(math.isfinite(value) for value in values):
            raise NotHeld(f"argument {param}=`{ast.unparse(node)}` is a float that differs between cases")
        return ScalarField(param, dims.new(param, [float(value) for value in values]), test_name)
    return ScalarField(param, values[0], test_name)


def _output(loop: TestLoop, cases: list[FollowedCase], dims: _Dims, position: int, taken: set[str]) -> TensorField:
    """The output the kernel returns at `position` (the only one, or one of a tuple)."""
    comparison = loop.comparisons[position]
    result_name = loop.result_names[position]
    named = f" {result_name!r}" if loop.several else ""  # which output the reasons are about
    what = f"output{named}" if loop.several else "the output"
    kernel = [case.kernel_outputs[position] for case in cases]
    reference = [case.reference_outputs[position] for case in cases]
    kernel_known = all(isinstance(value, Tensor) for value in kernel)
    reference_known = all(isinstance(value, Tensor) for value in reference)
    if kernel_known and reference_known and [t.shape for t in kernel] != [t.shape for t in reference]:
        raise PartialCheck(
            f"the kernel's output{named} has shape {list(kernel[0].shape)} "
            f"where the reference's has {list(reference[0].shape)}"
        )
    if kernel_known:
        tensors = kernel  # the declared output is what the kernel returns; the reference is cast to it
    elif reference_known and not comparison.cast:
        tensors = reference  # compared without a cast, so both have one dtype
    else:
        why = f"kernel: {_unknown_reason(kernel)}"
        if not reference_known:
            why += f"; reference: {_unknown_reason(reference)}"
        elif comparison.cast:
            why += "; the test casts before comparing, so the reference's dtype is not the kernel's"
        subject = f"the shape and dtype of {what}" if loop.several else "the output's shape and dtype"
        raise NotFollowed(f"{subject} cannot be read: {why}")
    if result_name not in taken:
        name = result_name
    else:
        name = "output" if not loop.several else f"output_{position + 1}"
    checked = _tensors(tensors, what)
    shape: list[str | int] = []
    for axis in range(len(checked[0].shape)):
        shape.append(dims.matching([t.shape[axis] for t in checked], f"{name}_{axis}", avoid=shape))
    dtype, case_dtypes = _dtype(checked, what)
    return TensorField(name, tuple(shape), dtype, case_dtypes=case_dtypes)


def _written(loop: TestLoop, cases: list[FollowedCase], inputs: tuple[TensorField, ...], position: int) -> TensorField:
    """An input the kernel writes into and the test compares: an output written in place."""
    name = loop.result_names[position]
    source = next((field for field in inputs if field.name == name), None)
    if source is None:
        raise NotHeld(f"the test compares {name!r}, which the kernel is given other than as a leading tensor")
    region = loop.comparisons[position].region
    for case in cases:
        reference = case.reference_outputs[position]
        kernel = case.kernel_outputs[position]
        part = name
        if region is not None:  # the part of it the test compares (arena.importer.written_region)
            subscript = ast.Subscript(ast.Name(name, ast.Load()), region, ast.Load())
            kernel, part = case.read(subscript), ast.unparse(subscript)
        if isinstance(reference, Tensor) and isinstance(kernel, Tensor) and reference.shape != kernel.shape:
            raise PartialCheck(
                f"the kernel writes {part!r} of shape {list(kernel.shape)} "
                f"where the reference has {list(reference.shape)}"
            )
    return TensorField(name, source.shape, source.dtype, inplace=True, case_dtypes=source.case_dtypes)


def _tolerances(loop: TestLoop, cases: list[FollowedCase], outputs: list[TensorField]) -> dict[str, dict[str, float]]:
    """Each float output's tolerance, by its dtype (arena's tolerances are per dtype). Integer
    outputs are checked exactly by arena: one the test lets differ is refused, and two outputs of
    one dtype that the test compares within different tolerances are refused."""
    by_dtype: dict[str, dict[str, float] | None] = {}
    first: dict[str, str] = {}  # dtype -> the output that set its tolerance
    for output, comparison in zip(outputs, loop.comparisons):
        if output.dtype in INT_DTYPES:
            _check_exact(comparison, cases, output)
            continue  # integer outputs are compared exactly anyway
        tolerance = _tolerance(comparison, cases) or _mixed_default(comparison, cases, output, loop)
        # a `$dtype` output: the test's tolerance under each dtype its cases give it
        for dtype in sorted(set(output.case_dtypes)) if output.dtype == CASE_DTYPE else [output.dtype]:
            if dtype not in by_dtype:
                by_dtype[dtype], first[dtype] = tolerance, output.name
            elif by_dtype[dtype] != tolerance:
                raise ToleranceNotHeld(
                    f"outputs {first[dtype]!r} and {output.name!r} are both {dtype} and the test compares "
                    f"them within different tolerances ({_shown(by_dtype[dtype])}; {_shown(tolerance)}); "
                    "arena's tolerances are per dtype"
                )
    return {dtype: tolerance for dtype, tolerance in by_dtype.items() if tolerance}


def _tolerance(comparison: Comparison, cases: list[FollowedCase]) -> dict[str, float] | None:
    default = _DEFAULT_TOLERANCES.get(comparison.kind)
    tolerance: dict[str, float] = {}
    for key, node, fallback in (("atol", comparison.atol, 0), ("rtol", comparison.rtol, 1)):
        if node is not None:
            tolerance[key] = _tolerance_value(cases, node, key)
        elif default is not None:
            tolerance[key] = default[fallback]
    return tolerance or None


# torch.testing.assert_close's defaults (atol, rtol) by dtype; between two dtypes it takes the looser.
_ASSERT_CLOSE_DEFAULTS = {
    "float16": (1e-5, 1e-3), "bfloat16": (1e-5, 1.6e-2), "float32": (1e-5, 1.3e-6), "float64": (1e-7, 1e-7),
}  # fmt: skip


def _mixed_default(
    comparison: Comparison, cases: list[FollowedCase], output: TensorField, loop: TestLoop
) -> dict[str, float] | None:
    """assert_close without a tolerance, of an output and a reference of another float dtype
    (`check_dtype=False`: a float32 output against a float16 product): torch's default for the
    looser of the two, which the test applies; None where the dtypes agree (arena's default then)."""
    if comparison.kind != "assert_close" or comparison.atol is not None or comparison.rtol is not None:
        return None
    index = loop.comparisons.index(comparison)
    dtypes = {output.dtype} | {str(getattr(case.reference_outputs[index], "dtype", "")) for case in cases}
    if len(dtypes) == 1 or not dtypes <= set(_ASSERT_CLOSE_DEFAULTS):
        return None
    atol, rtol = max(_ASSERT_CLOSE_DEFAULTS[d][0] for d in dtypes), max(_ASSERT_CLOSE_DEFAULTS[d][1] for d in dtypes)
    return {"atol": atol, "rtol": rtol}


def _check_exact(comparison: Comparison, cases: list[FollowedCase], output: TensorField) -> None:
    """NotImportable when the test gives an integer output a tolerance that accepts a difference."""
    given = {
        key: _tolerance_value(cases, node, key)
        for key, node in (("atol", comparison.atol), ("rtol", comparison.rtol))
        if node is not None
    }
    if given.get("atol", 0.0) + given.get("rtol", 0.0) * _INT_MAGNITUDES[output.dtype] >= 1:
        raise ToleranceNotHeld(
            f"output {output.name!r} is {output.dtype} and the test accepts differences in it ({_shown(given)}); "
            "arena checks integer outputs exactly"
        )


def _tolerance_value(cases: list[FollowedCase], node: ast.expr, key: str) -> float:
    value = same_in_every_case(cases, node, f"the tolerance {key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ToleranceNotHeld(f"the tolerance {key} is {value!r}, not a number >= 0")
    return float(value)


def _shown(tolerance: dict[str, float] | None) -> str:
    if not tolerance:
        return "arena's default"
    return ", ".join(f"{key} {value:g}" for key, value in tolerance.items())


def _tensors(values: list[Any], what: str) -> list[Tensor]:
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


def _case_value(value: float) -> int | float:
    return value if isinstance(value, float) else int(value)


def _dtype(tensors: list[Tensor], what: str) -> tuple[str, tuple[str, ...]]:
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


def _last_assignment(
    loop: TestLoop, name: str, before: ast.expr | None = None, writes: list[MaskWrite] | None = None
) -> ast.expr | ast.stmt | None:
    """The value the loop last assigns to `name` before the call, or the statement that binds it
    some other way (an unpacking, an import); None when the loop does not bind it. NotImportable
    when the loop writes into it after drawing it (`x[i] = 0`): no distribution draws that; where
    `writes` is given, a masked write after the draw (`x[torch.rand(...) < p] = v`) is added to it."""
    found: ast.expr | ast.stmt | None = None
    for statement in loop.statements:
        if statement is loop.call or (isinstance(statement, ast.Assign) and statement.value is before):
            break
        if isinstance(statement, ast.Assign) and [getattr(t, "id", "") for t in statement.targets] == [name]:
            if not _same_values(statement.value, name):  # `x = x.contiguous()` keeps the draw of x
                found = statement.value
                if writes is not None:
                    writes.clear()  # a write before this draw changes nothing it draws
        elif _keeps_values(statement):
            continue
        elif name in _stored_names(statement) or (
            not isinstance(statement, ast.Assign) and name in written_names(statement)
        ):
            found = statement  # an unpacking, or a loop, branch or in-place call that writes into it
        elif isinstance(statement, ast.Assign) and any(_base_name(t) == name for t in statement.targets):
            write = _mask_write(loop, statement, name) if writes is not None else None
            if write is None:
                first = ast.unparse(statement).splitlines()[0][:60]
                raise NotDrawn(f"input {name!r} is changed after it is drawn (line {statement.lineno}: `{first}`)")
            writes.append(write)  # type: ignore[union-attr]
    return found


@dataclass(frozen=True)
class MaskWrite:
    """`x[torch.rand(...) < p] = v`, or `m = torch.rand(...) < p` then `x[m] = v`: a share p of
    x's elements, chosen by a uniform draw, set to the constant v."""

    statement: ast.Assign
    rand: ast.Call  # torch.rand(...), its shape checked against x's in every case
    share: ast.expr  # p
    value: ast.expr  # v


def _mask_write(loop: TestLoop, statement: ast.Assign, name: str) -> MaskWrite | None:
    """The masked write `statement` makes into `name`, None when it is no such write. A mask bound
    to a name is that name's one assignment before the write, and no other statement reads it."""
    target = statement.targets[0]
    if len(statement.targets) != 1 or not isinstance(target, ast.Subscript):
        return None
    if not (isinstance(target.value, ast.Name) and target.value.id == name):
        return None
    mask = target.slice
    if isinstance(mask, ast.Name):
        bound = [
            s
            for s in loop.statements[: loop.statements.index(statement)]
            if mask.id in written_names(s) or mask.id in _stored_names(s)
        ]
        if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
            return None
        if not isinstance(bound[0].targets[0], ast.Name):
            return None
        readers = [
            s
            for s in loop.statements
            if s is not bound[0]
            and s is not statement
            and any(isinstance(n, ast.Name) and n.id == mask.id for n in ast.walk(s))
        ]
        if readers:
            return None
        mask = bound[0].value
    if not (isinstance(mask, ast.Compare) and len(mask.ops) == 1):
        return None
    left, right = mask.left, mask.comparators[0]
    if isinstance(mask.ops[0], ast.Gt):  # p > torch.rand(...)
        left, right = right, left
    elif not isinstance(mask.ops[0], ast.Lt):
        return None
    if not (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Attribute)
        and left.func.attr == "rand"
        and isinstance(left.func.value, ast.Name)
        and left.func.value.id == "torch"
        and all(k.arg == "device" for k in left.keywords)  # a dtype or a generator would change the share
        and not any(isinstance(a, ast.Starred) for a in left.args)
    ):
        return None
    return MaskWrite(statement, left, right, statement.value)


def _masked(
    dist: dict[str, Any], writes: list[MaskWrite], cases: list[FollowedCase], tensors: list[Tensor], shown: str
) -> dict[str, Any]:
    """`dist` with the masked write's share and value (docs/task-format.md: masked, mask_value)."""
    if len(writes) > 1:
        raise NotDrawn(f"input {shown!r} is written through {len(writes)} masks after it is drawn")
    write = writes[0]
    line = f"(line {write.statement.lineno}: `{ast.unparse(write.statement)[:60]}`)"
    _not_mapped(dist, shown, f"written through a mask {line}")
    if dist["kind"] not in MASKED_KINDS:
        raise NotDrawn(
            f"input {shown!r} is a {dist['kind']} draw written through a mask {line}; arena masks "
            f"{', '.join(MASKED_KINDS)} draws"
        )
    for case, tensor in zip(cases, tensors):
        drawn = case.read(write.rand)
        if not isinstance(drawn, Tensor) or tuple(drawn.shape) != tuple(tensor.shape):
            raise NotDrawn(f"input {shown!r}: its mask {line} is not of its shape in case {case.index + 1}")
    share = same_in_every_case(cases, write.share, f"input {shown!r}: the mask's share")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise NotDrawn(f"input {shown!r}: the mask's share {share!r} is not strictly between 0 and 1 {line}")
    value: Any = NAN if _is_nan(write.value) else same_in_every_case(cases, write.value, f"input {shown!r}: the value")
    if value != NAN and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
        raise NotDrawn(f"input {shown!r} is set to {value!r} through a mask {line}, not a number")
    return {**dist, "masked": share, "mask_value": value}


def _not_mapped(dist: dict[str, Any], shown: str, how: str) -> None:
    """NotImportable for a mapped or normalized draw (arena/task/mapped.py) also `how`: arena does one."""
    if any(key in dist for key in mapped.PARAMS):
        raise NotDrawn(f"input {shown!r} is a mapped or normalized draw also {how}, which arena does not combine")


def _is_nan(node: ast.expr) -> bool:
    """`float('nan')`, `torch.nan`, `math.nan` (a NaN is never equal to itself: read by its spelling)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "nan" and isinstance(node.value, ast.Name) and node.value.id in ("torch", "math")
    return (
        is_call_with_one_argument(node, "float")
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).lower() == "nan"
    )


def _stored_names(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _base_name(target: ast.expr) -> str:
    """`x` for targets `x[i]`, `x.data` and `x[i][j]`; "" for a plain name."""
    if not isinstance(target, (ast.Subscript, ast.Attribute)):
        return ""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else ""


def _dtype_of(value: Any) -> str | None:
    return value.dtype if isinstance(value, Tensor) else None


def _copied(node: ast.expr) -> ast.expr:
    """`x` for `x.clone()`, `x.contiguous()`, `x.to(torch.int64)` and `x`: what the value copies;
    also for `x.transpose(1, 2).contiguous().transpose(1, 2)`, x's values laid out in memory another
    way (a layout arena does not keep: it hands every input over contiguous)."""
    start = node = _stripped(node)
    swaps: list[str] = []  # the transposes met, from the outside in; each cancels the same one next to it
    while (swap := _swap(node)) is not None:
        swaps = swaps[:-1] if swaps and swaps[-1] == swap[0] else [*swaps, swap[0]]
        node = _stripped(swap[1])
    return node if not swaps else start


def _stripped(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_VALUES:
        node = node.func.value
    return node


def _swap(node: ast.expr) -> tuple[str, ast.expr] | None:
    """(the swap, the tensor) of `x.transpose(a, b)` (a and b int literals, either order), `x.t()`, `x.T`."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return "T", node.value
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.keywords:
        return None
    if node.func.attr == "t" and not node.args:
        return "T", node.func.value
    if node.func.attr != "transpose" or len(node.args) != 2:
        return None
    axes = [a.value for a in node.args if isinstance(a, ast.Constant) and type(a.value) is int]
    return (f"{min(axes)},{max(axes)}", node.func.value) if len(axes) == 2 else None


def _same_values(node: ast.expr, name: str) -> bool:
    """Whether `node` is `name` moved, copied, cast or laid out again (`x.contiguous()`,
    `x.to(torch.float16)`, `x.transpose(1, 2).contiguous().transpose(1, 2)`)."""
    node = _copied(node)
    return isinstance(node, ast.Name) and node.id == name


def _keeps_values(statement: ast.stmt) -> bool:
    """An `if` that only lays tensors out again (`if w.stride(1) != 1: w = w.contiguous()`): the
    values are the same whichever branch runs."""
    if not isinstance(statement, ast.If):
        return False
    return all(
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and _same_values(s.value, s.targets[0].id)
        for s in statement.body + statement.orelse
    )


def _defaults(function: ast.FunctionDef) -> dict[str, Any]:
    """The kernel function's literal defaults by parameter name."""
    spec = function.args
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    pairs = list(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults))
    pairs += [(a.arg, d) for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None]
    defaults = {}
    for name, node in pairs:
        try:
            defaults[name] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            continue
    return defaults


def _unknown_reason(values: list[Any]) -> str:
    return next((v.reason if isinstance(v, Unknown) else describe(v) for v in values if not isinstance(v, Tensor)), "")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
