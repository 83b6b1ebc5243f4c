"""How validation reads a NEEDS_DEVICE (validation/full.py check_correct): compiled without a GPU,
or not run at all on a GPU the task's archs do not cover."""

from __future__ import annotations

from arena.evaluation.evaluation import Evaluation, Status
from arena.task.archs import NOT_HERE
from arena.validation.findings import Findings
from arena.validation.full import check_correct


def _needs_device(compiled: bool, errors: tuple[str, ...]) -> Evaluation:
    return Evaluation("e1", "tasks/t/add:add", "d", "c", Status.NEEDS_DEVICE, compiled, False, errors=errors)


def test_a_gpu_of_another_family_is_noted_with_why():
    findings = Findings()
    why = NOT_HERE + "the task is declared for gfx942, no NVIDIA GPU; this GPU is sm_90"
    evaluation = _needs_device(False, (why,))
    assert evaluation.for_another_gpu
    check_correct("baseline", evaluation, findings)
    assert findings.notes == [f"baseline: not checked here: NEEDS_DEVICE: {why}"] and not findings.failures


def test_hip_compiled_without_a_gpu_is_noted_as_before():
    findings = Findings()
    evaluation = _needs_device(True, ())
    assert not evaluation.for_another_gpu
    check_correct("baseline", evaluation, findings)
    assert findings.notes == ["baseline: compiled; checking needs a GPU (NEEDS_DEVICE)"]
