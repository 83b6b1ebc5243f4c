"""`arena validate-task --task ADDR`: the check Pants runs for every task, on CPU or GPU.

1. the declaration loads; 2. the reference agrees with itself in float64 on the small cases
(within the task's tolerance); 3. the baseline evaluates correct (--check-only); 4. every exemplar
evaluates correct; 5. the wrong candidate does not. Without a GPU only non-timed cases are
checked, Triton through the interpreter; HIP compiles only, which is reported as NEEDS_DEVICE
and accepted. Exit 0 when every check passes, 1 with the list of failures.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.candidate.candidate import Candidate, exemplar_candidates, wrong_candidate
from arena.cli.evaluate import settings_from_args
from arena.errors import ArenaError
from arena.evaluation.evaluate import evaluate
from arena.evaluation.evaluation import Evaluation, Status
from arena.evaluation.reference_check import check_reference_precision
from arena.executors.local import LocalExecutor
from arena.harness.settings import BACKENDS, HarnessSettings
from arena.task.load import load_task
from arena.task.task import Task

HELP = "check that a task is well formed: reference precision, baseline, exemplars, wrong candidate"


@dataclass
class Findings:
    """What validation found: failures make the exit code 1; notes are informational."""

    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", required=True, metavar="ADDR", help="task address, e.g. tasks/triton2triton/softmax")
    parser.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="wall-clock limit of each evaluation in seconds "
        f"(default: the task's timeout, else {HarnessSettings.timeout_s:g})",
    )


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
    """`label` must evaluate correct; NEEDS_DEVICE (compiled, no GPU to check on) is accepted."""
    if evaluation.status is Status.NEEDS_DEVICE:
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


def run(args: argparse.Namespace) -> int:
    try:
        task = load_task(args.repo_root, args.task)
    except ArenaError as error:
        print(f"FAIL  the declaration does not load: {error}")
        return 1
    if task.skip:
        # Skipped tasks are validated for form only: their candidates are not run.
        print(f"{task.address}: valid declaration; skipped ({task.skip}), its candidates are not run")
        return 0
    args.check_only = True
    # The declared cases only: hidden copies (the same shapes, other seeds) keep an agent from
    # fitting the declared seeds, which a task's own baseline, exemplars and wrong candidate do
    # not; on the CPU they were half of each check's interpreted calls.
    settings = replace(settings_from_args(args, task), hidden_seeds=0)
    if settings.cases:
        print(f"no GPU: checking only the non-timed cases ({', '.join(settings.cases)})")
    # One child started ahead while the evaluation before it runs: four evaluations, not four
    # waits for a fresh child's imports.
    executor = LocalExecutor()
    try:
        findings = validate(task, args.repo_root, settings, runner=executor.run)
    finally:
        executor.close()
    for line in findings.passed:
        print(f"ok    {line}")
    for line in findings.notes:
        print(f"note  {line}")
    for line in findings.failures:
        print(f"FAIL  {line}")
    verdict = "valid" if not findings.failures else f"INVALID ({len(findings.failures)} failure(s))"
    print(f"{task.address}: {verdict}", file=sys.stdout)
    return 1 if findings.failures else 0
