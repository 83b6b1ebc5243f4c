"""The kernel_task declaration of an imported task, as BUILD file text (docs/task-format.md)."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from arena.importer.fields import TaskFields, TensorField
from arena.importer.reference_source import REFERENCE_FUNCTION
from arena.task.task import FLOAT_DTYPES, RETURN_IGNORED

CATEGORY = "triton2triton"


def declare(
    name: str,
    source: str,
    kernel_file: str,
    reference_file: str,
    instructions: str,
    fields: TaskFields,
    modules: list[str] | None = None,
    function: str = REFERENCE_FUNCTION,
    adapter: str | None = None,
    archs: list[str] | None = None,
) -> dict[str, Any]:
    """The kernel_task keyword arguments. The first case is checked only (it is the one a CPU
    checks); the others are timed as well, as the original test times every shape. `adapter`: the
    file of the function written around the test's own launch (arena.importer.launch), then the
    entry, in the baseline beside the kernel file; `archs`: the GPUs it is for, when not arena's
    default (arena.importer.amd_options)."""
    case_dtype = next((f.dtype for f in fields.outputs + fields.inputs if f.dtype in FLOAT_DTYPES), "float32")
    cases = [
        {
            "name": f"shape{k + 1}",
            "dims": dims,
            "dtype": fields.case_dtypes[k] if fields.case_dtypes else case_dtype,
            "seed": seed,
            "timed": k > 0,
        }
        for k, (dims, seed) in enumerate(zip(fields.dims, fields.seeds))
    ]
    for k, case in enumerate(cases):  # an input whose distribution differs between cases
        dists = {f.name: f.case_dists[k] for f in fields.inputs if f.case_dists and f.case_dists[k] != f.dist}
        if dists:
            case["dists"] = dists
    if len(cases) == 1:  # a task needs a timed case: the only one again, timed (the first stays checked on a CPU)
        cases.append({**cases[0], "name": "shape1_timed", "timed": True})
    declared: dict[str, Any] = {
        "name": name,
        "category": CATEGORY,
        "description": _description(instructions, source),
        "baseline": [kernel_file, adapter] if adapter else [kernel_file],
        "entry": f"{adapter or kernel_file}:{fields.function}" + (RETURN_IGNORED if fields.return_ignored else ""),
        "signature": signature(fields),
        "reference": f"{reference_file}:{function}",
        "sources": [reference_file, *(modules or [])],
        "inputs": [field.declared() for field in fields.inputs],
        "outputs": [output.declared() for output in fields.outputs],
        "scalars": {scalar.param: scalar.value for scalar in fields.scalars},
        "cases": cases,
    }
    if fields.abi:  # a tensor after a non-tensor argument: the call's order (docs/task-format.md)
        declared["abi"] = list(fields.abi)
    if fields.tolerances:
        declared["tolerances"] = fields.tolerances
    if archs:
        declared["archs"] = archs
    return declared


def signature(fields: TaskFields) -> str:
    """E.g. `rms_norm(x: [rows, hidden] float16, weight: [hidden] float16, *, eps=1e-06) -> [rows, hidden] float16`;
    several outputs as a tuple: `quant(x: [M, N] float16) -> ([M, N] int8, [M, 1] float32)`; in the
    abi's order where it has one: `bmm(x: [M, K] float16, M=M, y: [K, N] float16)`; inputs
    written in place after it: `fill(x: [N] float32, out: [N] float32) -> None; writes out`, and
    `-> ignored; writes out` where it also returns what the test ignores (the entry declares it)."""
    shown_inputs = {field.name: f"{field.name}: {_tensor(field)}" for field in fields.inputs}
    shown_scalars = {scalar.param: f"{scalar.param}={scalar.value}" for scalar in fields.scalars}
    parts = [shown_inputs.get(name) or shown_scalars[name] for name in fields.abi] or list(shown_inputs.values())
    by_name = [shown for param, shown in shown_scalars.items() if param not in fields.abi]
    if by_name:
        parts += ["*", *by_name]
    outputs = [output for output in fields.outputs if not output.inplace]
    returned = ", ".join(_tensor(output) for output in outputs)
    shown = "None" if not outputs else returned if len(outputs) == 1 else f"({returned})"
    if fields.return_ignored:  # every output written in place, and what it returns is no output
        shown = "ignored"
    written = [output.name for output in fields.outputs if output.inplace]
    return f"{fields.function}({', '.join(parts)}) -> {shown}" + (f"; writes {', '.join(written)}" if written else "")


def build_file_text(declared: dict[str, Any], source: str, fitted: Sequence[str] = ()) -> str:
    """The BUILD file: one kernel_task, every value a literal, one case per line; `fitted`: comment
    lines above `tolerances` (arena.importer.fit: a tolerance fitted, and AKA's)."""
    lines = [
        f"# Imported from AgentKernelArena {source} by `arena import aka`; do not commit (third-party code).",
        "kernel_task(",
    ]
    for key, value in declared.items():
        if key == "cases":
            lines.append("    cases=[")
            lines += [f"        {case!r}," for case in value]
            lines.append("    ],")
        else:
            if key == "tolerances":
                lines += [f"    # {line}" for comment in fitted for line in textwrap.wrap(comment, 96)]
            lines.append(f"    {key}={value!r},")
    lines.append(")")
    return "\n".join(lines) + "\n"


def _tensor(field: TensorField) -> str:
    return f"[{', '.join(str(dim) for dim in field.shape)}] {field.dtype}"


def _description(instructions: str, source: str) -> str:
    provenance = (
        f"Imported from AgentKernelArena task {source}: its kernel file, its correctness test's shapes, "
        "input draws and tolerance, and its reference."
    )
    return f"{instructions}\n\n{provenance}" if instructions else provenance
