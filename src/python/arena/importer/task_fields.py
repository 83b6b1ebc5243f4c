"""From the followed cases of a test loop to what a kernel_task declares: dims, inputs, scalars,
the outputs, cases and the tolerances (docs/task-format.md).

A shape is named by the test's own dim names where it uses them (`torch.randn(rows, hidden)`);
an axis the test computes gets a dim of its own (`x_0`), set in every case to the value the
test gives it, so each case keeps exactly the shapes the original test ran.

Each part is read in a module of its own (arena.importer.dims, .input_fields, .scalar_fields,
.output_fields, .tolerances; the fields: .fields); here they are put together and checked as a whole.
"""

from __future__ import annotations

import ast

from arena.importer.correctness import TestLoop
from arena.importer.dims import Dims
from arena.importer.fields import TaskFields, TensorField
from arena.importer.follow import FollowedCase
from arena.importer.input_fields import read_inputs
from arena.importer.outcome import NotDrawn, NotHeld
from arena.importer.output_fields import returned_output, written_output
from arena.importer.scalar_fields import read_scalars
from arena.importer.tolerances import tolerances_by_dtype


def read_task_fields(
    loop: TestLoop, cases: list[FollowedCase], function: ast.FunctionDef, positional: bool = False
) -> TaskFields:
    """The task's fields from the test's loop, its cases and the entry `function`; `positional`:
    the entry takes no keywords (an autograd Function's `apply`), so its scalars go by position
    too, in the call's order (the abi)."""
    dims = Dims(cases, loop)
    inputs, scalar_arguments = read_inputs(loop, cases, dims)
    _check_sources(inputs)
    dims.taken |= {field.name for field in inputs}
    tensors = [p for p in range(len(loop.kernel_call.args)) if p not in scalar_arguments]
    interleaved = bool(scalar_arguments) and (positional or max(tensors) > min(scalar_arguments))
    scalars = read_scalars(loop, cases, dims, function, scalar_arguments, keep_positional=interleaved)
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    names = iter(field.name for field in inputs)
    abi = tuple(params[p] if p in scalar_arguments else next(names) for p in range(len(loop.kernel_call.args)))
    taken = {field.name for field in inputs} | {s.param for s in scalars}
    outputs: list[TensorField] = []
    for position in range(len(loop.comparisons)):
        if loop.result_names[position] in loop.written:
            outputs.append(written_output(loop, cases, inputs, position))
        else:
            outputs.append(returned_output(loop, cases, dims, position, taken | {field.name for field in outputs}))
    seeds = tuple(case.seed if case.seed is not None else 1000 + case.index for case in cases)
    case_dtypes = case_dtypes_of(inputs + tuple(outputs))
    return TaskFields(
        function=loop.function_name,
        inputs=inputs,
        scalars=scalars,
        outputs=tuple(outputs),
        dims=dims.per_case(),
        seeds=seeds,
        tolerances=tolerances_by_dtype(loop, cases, outputs),
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
