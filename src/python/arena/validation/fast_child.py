"""The fast tier's child: many tasks checked in one process that imports torch once.

`python -m arena.validation.fast_child REPO_ROOT FD ADDR...` writes, to descriptor FD, one JSON
line {"start": ADDR} as it begins each task and one {"task": ADDR, "findings": ..., "seconds": S}
when it is done (fast.py reads them). Per task, on its untimed cases: the reference against itself
in float64; the baseline and the wrong candidate screened by the static rules, built, called with
the torch functions they use recorded, and compared with the reference through the harness's own
checks (check.py); the baseline twice, bitwise. Then the task's quality: a loosened tolerance
must still refuse a lower-precision reference (precision.py), and the baseline must match the
reference on undeclared variants of the cases, new seeds and sizes (variants.py). These are the
repository's own trusted files, so they run here, not in the judge and worker a candidate gets
(full.py runs those, for the tasks fast.py's caller picks). HIP without a GPU is compiled only.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Sequence

from arena.candidate.candidate import Candidate, baseline_candidate, wrong_candidate
from arena.errors import ArenaError
from arena.harness.device import Device
from arena.task.task import Case, Task
from arena.validation.findings import Findings


class Side:
    """One side (baseline, wrong candidate) laid out, built and loaded, or why it could not be."""

    def __init__(self, task: Task, candidate: Candidate, repo_root: Path, root: Path, device: Device) -> None:
        from arena.harness.device import device_arch
        from arena.harness.forbidden import check_candidate
        from arena.harness.job import lay_out
        from arena.harness.loading import BuildFailed, build_side, load_side

        self.kernel: Any = None
        self.problem = ""
        self.dirs = lay_out(task, candidate, repo_root, root)
        work = root / "work"
        work.mkdir(exist_ok=True)
        findings = check_candidate(candidate.files, baseline_candidate(task, repo_root).files, task.forbidden)
        if findings:
            self.problem = f"refused by the static rules: {findings[0]}"
            return
        backend = device.backend if device.backend != "cpu" else "cuda"  # HIP on a CPU: nvcc, compile only
        arch = device_arch(device) or next((a for a in task.archs if a.startswith("sm_")), "sm_90")
        try:
            build_side(task, self.dirs["candidate"], work, "side", backend, arch)
        except BuildFailed as failed:
            self.problem = str(failed)
            return
        if task.category.is_hip and device.backend == "cpu":
            self.problem = "compiled; running it needs a GPU"
            return
        self.kernel = load_side(task, self.dirs["candidate"], work, "side")


def _outputs(task: Task, case: Case, device: Device) -> list[Any]:
    import torch

    from arena.harness.check import poison_
    from arena.harness.inputs import spec_dtype, spec_shape, torch_dtype

    made = [
        torch.empty(spec_shape(s, case), dtype=torch_dtype(spec_dtype(s, case)), device=device.torch_device)
        for s in task.outputs
        if not s.inplace  # an input written in place is the call's own working copy
    ]
    for tensor in made:
        poison_(tensor)
    return made


def call(kernel: Any, task: Task, case: Case, inputs: Sequence[Any], device: Device) -> tuple[Any, set[str]]:
    """One call on copies of `inputs`, as the judge makes it: (outputs or an error, torch calls)."""
    import torch

    from arena.harness import guard
    from arena.harness.check import changed_inputs, returned_outputs, with_written
    from arena.harness.inputs import make_scalars

    working = [t.clone() for t in inputs]
    outputs = _outputs(task, case, device) if kernel.harness_outputs else []
    args = (working, make_scalars(task, case), outputs, dict(case.dims))
    result, ops = guard.record_ops(lambda: kernel.invoke(*args))
    if device.backend != "cpu":
        torch.cuda.synchronize(device.torch_device)
    if kernel.harness_outputs:
        got: Any = tuple(outputs) if result == 0 else f"the launcher returned error {result}"
    else:
        got = returned_outputs(task, result)
    got = got if isinstance(got, str) else with_written(task, got, working)
    writable = {s.name for s in task.outputs if s.inplace}
    moved = changed_inputs([s.name for s in task.inputs], working, inputs, writable)
    return (moved if moved and not isinstance(got, str) else got), ops


def mismatch(task: Task, got: Any, want: Sequence[Any]) -> str | None:
    """Why `got` is not the reference's answer `want` (check.py's rules), or None."""
    from arena.harness.check import check_output_type, find_mismatch
    from arena.task.tolerance import tolerance_for

    if isinstance(got, str):
        return got
    for spec, g, w in zip(task.outputs, got, want):
        error = check_output_type(spec.name, g, w) or find_mismatch(
            spec.name, g, w, tolerance_for(task, str(w.dtype).removeprefix("torch."))
        )
        if error:
            return error
    return None


def _check_reference(task: Task, reference: Any, cases: Sequence[Case], findings: Findings) -> None:
    from arena.validation.reference_check import check_case_precision

    if reference is None:
        findings.notes.append("reference: the baseline is the oracle; no float64 check")
        return
    for case in cases:
        try:
            error = check_case_precision(task, reference, case.name)
        except Exception as raised:  # the task's own code: its failure is a finding
            error = f"the reference raised {type(raised).__name__}: {raised}"
        if error:
            findings.failures.append(f"reference on case {case.name!r} does not meet the task's tolerance: {error}")
        else:
            findings.passed.append(f"reference agrees with float64 on case {case.name!r}")


HIDDEN_CASES = 2  # untimed cases the hidden-case check redraws: each costs a baseline call (+20% CPU at 2)


def _call_or_why(kernel: Any, task: Task, case: Case, inputs: Sequence[Any], device: Device) -> Any:
    """The outputs of one call, or why there are none (an undeclared size may be one the code
    refuses: that is said, not raised)."""
    try:
        got, _ = call(kernel, task, case, inputs, device)
    except Exception as raised:  # the task's own code
        return f"{type(raised).__name__}: {raised}"
    return got


def _check_hidden(
    task: Task, side: Side, oracle: Any, cases: Sequence[Case], device: Device, findings: Findings
) -> None:
    """Check d: the baseline matches the reference on undeclared variants of HIDDEN_CASES untimed
    cases (variants.py): a new seed, and nearby odd sizes of the dims the task leaves free."""
    from arena.harness.inputs import make_inputs
    from arena.validation.variants import pick_cases

    checked = []
    for case, variants in pick_cases(task, cases, HIDDEN_CASES):
        for variant in variants:
            try:
                inputs = make_inputs(task, variant, device.torch_device)
            except Exception as raised:  # a distribution that needs the declared sizes
                findings.notes.append(f"hidden-case check: no inputs for {variant.name!r}: {raised}")
                continue
            want = _call_or_why(oracle, task, variant, inputs, device)
            if isinstance(want, str):
                findings.notes.append(f"hidden-case check: the reference fails on {variant.name!r}: {want[:300]}")
                continue
            want = [t.contiguous() for t in want]
            got = _call_or_why(side.kernel, task, variant, inputs, device)
            error = mismatch(task, got, want)
            if error is None:
                checked.append(variant.name)
                break
            if isinstance(got, str) and variant.dims != case.dims:
                findings.notes.append(f"hidden-case check: the baseline does not run on {variant.name!r}: {got[:300]}")
                continue
            findings.failures.append(
                f"baseline differs from the reference on an undeclared case, {variant.name!r} (seed "
                f"{variant.seed}, dims {dict(variant.dims)}): {error}"
            )
    if checked:
        findings.passed.append(f"baseline matches the reference on undeclared case(s) {', '.join(map(repr, checked))}")


def _answers(task: Task, oracle: Any, cases: Sequence[Case], device: Device) -> dict[str, tuple[list, Any]]:
    """Per case: (inputs, the oracle's outputs or why it failed)."""
    from arena.harness.inputs import make_inputs

    answers = {}
    for case in cases:
        inputs = make_inputs(task, case, device.torch_device)
        got, _ = call(oracle, task, case, inputs, device)
        answers[case.name] = (inputs, got if isinstance(got, str) else [t.contiguous() for t in got])
    return answers


def _check_baseline(task: Task, side: Side, answers: dict, device: Device, findings: Findings) -> None:
    from arena.harness.check import same_bits
    from arena.harness.guard import forbidden_ops

    cases = {c.name: c for c in task.cases}
    for name, (inputs, want) in answers.items():
        got, ops = call(side.kernel, task, cases[name], inputs, device)
        error = want if isinstance(want, str) else mismatch(task, got, want)
        hits = forbidden_ops(ops, task.forbidden)
        if hits:
            error = f"calls forbidden torch function(s): {', '.join(hits)}"
        if error is None:
            again, _ = call(side.kernel, task, cases[name], inputs, device)
            if isinstance(again, str) or not all(same_bits(a, b) for a, b in zip(again, got)):
                error = "not deterministic: a second call on the same inputs differs bitwise"
        if error:
            findings.failures.append(f"baseline on case {name!r}: {error}")
        else:
            findings.passed.append(f"baseline correct on case {name!r}")


def _check_wrong(task: Task, side: Side, answers: dict, device: Device, findings: Findings) -> None:
    from arena.harness.guard import forbidden_ops

    cases = {c.name: c for c in task.cases}
    caught = []
    for name, (inputs, want) in answers.items():
        if isinstance(want, str):
            return  # the oracle failed: already a finding
        got, ops = call(side.kernel, task, cases[name], inputs, device)
        if isinstance(got, str) or forbidden_ops(ops, task.forbidden):
            reason = got if isinstance(got, str) else "it calls a forbidden torch function"
            findings.failures.append(
                f"the wrong candidate fails before its numbers are checked, so it does not test the cases: {reason}"
            )
            return
        if mismatch(task, got, want):
            caught.append(name)
    if caught:
        findings.passed.append(f"the wrong candidate is caught on case(s) {', '.join(map(repr, caught))}")
    else:
        findings.failures.append(
            "the wrong candidate matches the reference on every small case: the cases do not catch it"
        )


def check_task(task: Task, repo_root: Path, device: Device, scratch: Path) -> Findings:
    """The fast tier's checks of one loaded task (see the module's docstring)."""
    from arena.harness.backends.python_entry import load_python_entry
    from arena.validation.precision import check_tolerance
    from arena.validation.reference_check import load_reference

    findings = Findings()
    cases = [case for case in task.cases if not case.timed]
    if not cases:
        findings.notes.append("no untimed case: the fast tier checks nothing beyond the declaration")
        return findings
    reference = load_reference(task, repo_root / task.task_dir) if task.reference else None
    _check_reference(task, reference, cases, findings)
    if reference is not None:  # check c (precision.py)
        failures, passed, notes = check_tolerance(task, reference, cases)
        findings.failures.extend(failures)
        findings.passed.extend(passed)
        findings.notes.extend(notes)
    baseline = Side(task, baseline_candidate(task, repo_root), repo_root, scratch / "baseline", device)
    try:
        wrong_files = wrong_candidate(task, repo_root)
    except ArenaError as error:
        findings.failures.append(f"the wrong candidate cannot be loaded: {error}")
        wrong_files = None
    wrong = Side(task, wrong_files, repo_root, scratch / "wrong", device) if wrong_files else None
    for label, side in (("baseline", baseline), ("wrong candidate", wrong)):
        if side is not None and side.kernel is None:
            compiled = side.problem.startswith("compiled")
            (findings.notes if compiled else findings.failures).append(f"{label}: {side.problem}")
    if wrong_files is None and not findings.failures:
        findings.notes.append("no wrong candidate declared")
    if baseline.kernel is None:
        if task.category.is_hip and device.backend == "cpu":
            findings.notes.append("hidden-case check: skipped, running the HIP baseline needs a GPU")
        return findings
    oracle = baseline.kernel
    if task.reference is not None:
        oracle = load_python_entry(baseline.dirs["task"], task.reference, "reference")
    answers = _answers(task, oracle, cases, device)
    for name, (_, want) in answers.items():
        if isinstance(want, str):
            findings.failures.append(f"the reference fails on case {name!r}: {want}")
    _check_baseline(task, baseline, answers, device, findings)
    if task.reference is None:
        findings.notes.append("hidden-case check: skipped, the baseline is the oracle")
    elif not any(line.startswith("baseline on case") for line in findings.failures):
        _check_hidden(task, baseline, oracle, cases, device, findings)
    if wrong is not None and wrong.kernel is not None:
        _check_wrong(task, wrong, answers, device, findings)
    return findings


def open_check_device() -> Device:
    import torch

    from arena.harness.device import open_device, select_backend

    backend = select_backend("auto")
    if backend == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported (torch may import it)
        from arena.harness.backends.interpreter import prepare_interpreter

        prepare_interpreter()
    # Every torch.empty filled with NaN (integers: their largest value): the baseline, the oracle
    # and the wrong candidate share this process, and an output left partly unwritten must not
    # read an earlier call's answer that the allocator hands back (the judge and the candidate's
    # worker are apart in the full tier). Warn-only: no operation is refused for it.
    torch.use_deterministic_algorithms(True, warn_only=True)
    return open_device(backend, 0)


def main(argv: Sequence[str]) -> int:
    from arena.task.load import load_task

    repo_root, fd, addresses = Path(argv[0]), int(argv[1]), argv[2:]
    out = os.fdopen(fd, "w", buffering=1)
    device = open_check_device()
    with tempfile.TemporaryDirectory(prefix="arena-fast-") as scratch:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton")
        for index, address in enumerate(addresses):
            out.write(json.dumps({"start": address}) + "\n")
            began = time.perf_counter()
            findings = Findings()
            try:
                task = load_task(repo_root, address)
                findings = check_task(task, repo_root, device, Path(scratch) / str(index))
            except Exception as error:  # the task's own code: whatever it raises is a finding
                findings.failures.append(f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}")
            seconds = round(time.perf_counter() - began, 2)
            out.write(json.dumps({"task": address, "findings": findings.to_dict(), "seconds": seconds}) + "\n")
    out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
