"""The full validation of one task, through the real harness (judge, worker, sandbox).

1. the reference agrees with itself in float64 on the small cases (within the task's tolerance);
2. the baseline evaluates correct (check-only); 3. every exemplar evaluates correct; 4. the wrong
candidate is caught by the correctness check. Without a GPU only non-timed cases are checked,
Triton through the interpreter; HIP compiles only, reported as NEEDS_DEVICE and accepted. On a
GPU the task's archs do not cover (task/archs.py) nothing runs: NEEDS_DEVICE, noted with why.
"""

from __future__ import annotations

from pathlib import Path

from arena.candidate.candidate import Candidate, exemplar_candidates, wrong_candidate
from arena.errors import ArenaError
from arena.evaluation.evaluate import evaluate
from arena.evaluation.evaluation import Evaluation, Status
from arena.harness.settings import HarnessSettings
from arena.task.task import Task
from arena.validation.findings import Findings
from arena.validation.reference_check import check_reference_precision


def _describe(evaluation: Evaluation) -> str:
    errors = "; ".join(evaluation.errors[:3]) or next((c.error for c in evaluation.cases if c.error), "")
    return f"{evaluation.status.value}" + (f": {errors}" if errors else "")


def check_reference(task: Task, repo_root: Path, cases: tuple[str, ...], findings: Findings) -> None:
    if task.reference is None:
        findings.notes.append("reference: the baseline is the oracle; no float64 check")
        return
    if not cases:
        findings.notes.append("reference: no non-timed case to run the float64 check on")
        return
    for name, error in check_reference_precision(task, repo_root, cases).items():
        if error:
            findings.failures.append(f"reference on case {name!r} does not meet the task's tolerance: {error}")
        else:
            findings.passed.append(f"reference agrees with float64 on case {name!r}")


def check_correct(label: str, evaluation: Evaluation, findings: Findings) -> None:
    """`label` must evaluate correct; NEEDS_DEVICE (compiled, no GPU to check on; or a GPU the task
    is not declared for) is accepted, and says which."""
    if evaluation.for_another_gpu:
        findings.notes.append(f"{label}: not checked here: {_describe(evaluation)}")
    elif evaluation.status is Status.NEEDS_DEVICE:
        findings.notes.append(f"{label}: compiled; checking needs a GPU (NEEDS_DEVICE)")
    elif evaluation.status is Status.PASSED and evaluation.correct:
        findings.passed.append(f"{label} evaluates correct")
    else:
        findings.failures.append(f"{label} does not evaluate correct: {_describe(evaluation)}")


def check_wrong(evaluation: Evaluation, findings: Findings) -> None:
    """The wrong candidate must fail the correctness check itself (INCORRECT): one stopped earlier
    (compile error, forbidden API, crash) proves nothing about the cases."""
    if evaluation.status is Status.NEEDS_DEVICE:
        findings.notes.append("wrong candidate: cannot be checked on this machine (NEEDS_DEVICE)")
    elif evaluation.status is Status.INCORRECT:
        findings.passed.append("the wrong candidate is caught by the correctness check (INCORRECT)")
    elif evaluation.correct:
        findings.failures.append("the wrong candidate evaluates correct: the cases do not catch it")
    else:
        findings.failures.append(
            f"the wrong candidate fails before its numbers are checked, so it does not test the cases: "
            f"{_describe(evaluation)}"
        )


def validate(task: Task, repo_root: Path, settings: HarnessSettings, **options: object) -> Findings:
    """Every check on one loaded task; `options` go to evaluate() (tests inject a runner)."""
    findings = Findings()
    small = settings.cases or tuple(case.name for case in task.cases if not case.timed)
    check_reference(task, repo_root, small, findings)

    def run_one(candidate: Candidate | None) -> Evaluation:
        return evaluate(task, candidate, repo_root, settings, None, **options)  # type: ignore[arg-type]

    check_correct("baseline", run_one(None), findings)
    try:
        exemplars = exemplar_candidates(task, repo_root)
        wrong = wrong_candidate(task, repo_root)
    except ArenaError as error:
        findings.failures.append(f"exemplar or wrong candidate cannot be loaded: {error}")
        return findings
    for folder, candidate in exemplars.items():
        check_correct(f"exemplar {folder}", run_one(candidate), findings)
    if wrong is None:
        findings.notes.append("no wrong candidate declared")
    else:
        check_wrong(run_one(wrong), findings)
    return findings
