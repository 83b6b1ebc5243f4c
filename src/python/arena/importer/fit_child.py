"""The tolerance fit's child: the lowered reference of imported tasks measured, in one process
that imports torch once (arena.importer.fit starts it; the importer's own process never runs a
task's code).

`python -m arena.importer.fit_child OUT FD ADDR...` writes, to descriptor FD, one JSON line
{"start": ADDR} as it begins each task and one {"task": ADDR, "measured": [...], "notes": [...]}
when it is done. Per untimed case (the cases check c runs) and float output: the reference
lowered as check c lowers it (arena.validation.precision.lowered_outputs) against float64, as
{"case", "output", "dtype", "s_low", "s_ref", "s_base", "default_refuses", "task_refuses"}, where
s_low is the smallest s with |lowered - float64| <= s + s * |float64| at every element (inf where
no s accepts it: a NaN or an infinity float64 does not have), s_ref the same of the reference in
the case's own dtype (what validation's float64 check of the reference measures) and s_base that
of the baseline against that reference (what validation's check of the baseline measures), the
baseline run as the fast tier runs it (arena.validation.fast_child: the Triton interpreter without
a GPU), or None where it cannot run (a HIP baseline without a GPU: a note says why).
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Sequence


def error_scale(low: Any, exact: Any) -> float:
    """The smallest s with |low - exact| <= s + s * |exact| everywhere (the harness's comparison,
    arena.harness.check.mismatch_mask, at atol = rtol = s); inf where no s accepts `low`."""
    import torch

    g, w = low.double(), exact.double()
    finite = torch.isfinite(w)
    matched = (torch.isnan(w) & torch.isnan(g)) | (torch.isinf(w) & (g == w))
    if bool((~finite & ~matched).any()):
        return math.inf
    ratio = ((g - w).abs() / (1 + w.abs()))[finite]
    if ratio.numel() == 0:
        return 0.0
    return math.inf if bool(torch.isnan(ratio).any()) else float(ratio.max())


def measure_task(root: Path, address: str, device: Any, scratch: Path) -> dict[str, Any]:
    """The lowered reference and the baseline of one task on its untimed cases (see the module's
    docstring); `device` as validation's fast tier opens it, `scratch` a folder for the baseline."""
    from arena.harness.check import find_mismatch
    from arena.task.load import load_task
    from arena.task.tolerance import DEFAULT_TOLERANCES, tolerance_for
    from arena.validation.precision import lowered_outputs
    from arena.validation.reference_check import load_reference

    task = load_task(root, address)
    if task.reference is None:
        return {"measured": [], "notes": ["no reference: nothing to lower"]}
    reference = load_reference(task, root / task.task_dir)
    measured: list[dict[str, Any]] = []
    notes: list[str] = []
    baseline = _baseline(task, root, device, scratch, notes)
    for case in (case for case in task.cases if not case.timed):
        try:
            pairs = lowered_outputs(task, reference, case)
            plain = _plain_outputs(task, reference, case)
        except Exception as raised:  # the task's own code under a rounding mode: say so, measure the rest
            notes.append(
                f"the lower-precision reference fails on case {case.name!r}: {type(raised).__name__}: {raised}"
            )
            continue
        based = _baseline_outputs(task, baseline, case, device, notes) if baseline is not None else {}
        for spec, dtype, low, exact in pairs:
            default = find_mismatch(spec.name, low, exact, DEFAULT_TOLERANCES[dtype])
            own = find_mismatch(spec.name, low, exact, tolerance_for(task, dtype))
            measured.append(
                {
                    "case": case.name,
                    "output": spec.name,
                    "dtype": dtype,
                    "s_low": error_scale(low, exact),
                    "s_ref": error_scale(plain[spec.name], exact),
                    "s_base": error_scale(based[spec.name], plain[spec.name]) if spec.name in based else None,
                    "default_refuses": default is not None,
                    "task_refuses": own is not None,
                }
            )
    return {"measured": measured, "notes": notes}


def _baseline(task: Any, root: Path, device: Any, scratch: Path, notes: list[str]) -> Any:
    """The task's baseline built and loaded as the fast tier loads it, or None (with a note)."""
    from arena.candidate.candidate import baseline_candidate
    from arena.validation.fast_child import Side

    side = Side(task, baseline_candidate(task, root), root, scratch, device)
    if side.kernel is None:
        notes.append(f"the baseline's own error is not measured: {side.problem}")
    return side.kernel


def _baseline_outputs(task: Any, kernel: Any, case: Any, device: Any, notes: list[str]) -> dict[str, Any]:
    """The baseline's outputs on the case's inputs, on the CPU, by name ({} with a note where it
    fails: validation reports that)."""
    from arena.harness.inputs import make_inputs
    from arena.validation.fast_child import call

    try:
        got, _ = call(kernel, task, case, make_inputs(task, case, device.torch_device), device)
    except Exception as raised:  # the task's own code
        got = f"{type(raised).__name__}: {raised}"
    if isinstance(got, str):
        notes.append(f"the baseline's own error is not measured on case {case.name!r}: {got[:300]}")
        return {}
    return {spec.name: tensor.detach().cpu() for spec, tensor in zip(task.outputs, got)}


def _plain_outputs(task: Any, reference: Any, case: Any) -> dict[str, Any]:
    """The reference's outputs in the case's own dtype, by name: what validation's float64 check
    of the reference compares (arena/validation/reference_check.py)."""
    import torch

    from arena.harness.check import called_outputs
    from arena.harness.inputs import make_inputs, make_scalars

    with torch.no_grad():
        got = called_outputs(task, reference, make_inputs(task, case, torch.device("cpu")), make_scalars(task, case))
    if isinstance(got, str):
        raise ValueError(f"the reference: {got}")
    return {spec.name: tensor for spec, tensor in zip(task.outputs, got)}


def main(argv: Sequence[str]) -> int:
    from arena.validation.fast_child import open_check_device

    device = open_check_device()  # the interpreter chosen before triton is imported (no GPU)
    import arena.validation.precision  # noqa: F401 (torch, before the first task's time limit starts)

    root, fd, addresses = Path(argv[0]), int(argv[1]), argv[2:]
    out = os.fdopen(fd, "w", buffering=1)
    with tempfile.TemporaryDirectory(prefix="arena-fit-") as scratch:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton")
        for index, address in enumerate(addresses):
            out.write(json.dumps({"start": address}) + "\n")
            began = time.perf_counter()
            try:
                message = measure_task(root, address, device, Path(scratch) / str(index))
            except Exception as error:  # the task's own code: whatever it raises is that task's
                message = {"error": f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}"}
            seconds = round(time.perf_counter() - began, 2)
            out.write(json.dumps({"task": address, **message, "seconds": seconds}) + "\n")
    out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
