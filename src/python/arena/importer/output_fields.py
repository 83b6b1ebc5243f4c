"""The outputs the test compares: one the kernel returns, with its shape in dims and its dtype, or an
input the kernel writes in place."""

from __future__ import annotations

import ast
from typing import Any

from arena.importer.case_tensors import checked_tensors, field_dtype
from arena.importer.correctness import TestLoop
from arena.importer.dims import Dims
from arena.importer.fields import TensorField
from arena.importer.follow import FollowedCase
from arena.importer.outcome import NotFollowed, NotHeld, PartialCheck
from arena.importer.values import Tensor, Unknown, describe


def returned_output(
    loop: TestLoop, cases: list[FollowedCase], dims: Dims, position: int, taken: set[str]
) -> TensorField:
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
    checked = checked_tensors(tensors, what)
    shape: list[str | int] = []
    for axis in range(len(checked[0].shape)):
        shape.append(dims.matching([t.shape[axis] for t in checked], f"{name}_{axis}", avoid=shape))
    dtype, case_dtypes = field_dtype(checked, what)
    return TensorField(name, tuple(shape), dtype, case_dtypes=case_dtypes)


def written_output(
    loop: TestLoop, cases: list[FollowedCase], inputs: tuple[TensorField, ...], position: int
) -> TensorField:
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


def _unknown_reason(values: list[Any]) -> str:
    return next((v.reason if isinstance(v, Unknown) else describe(v) for v in values if not isinstance(v, Tensor)), "")
