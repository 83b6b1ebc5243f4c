"""The task-quality checks that need a GPU's timings (`arena validate-task --quality --timings FILE`).

The timings are the product's own: the JSON `arena suite --json` writes (every evaluation with its
cases' baseline and candidate times; with `--exemplars`, the candidates are the exemplars) or one
evaluation's JSON (`arena evaluate --json`). Per task:
(a) a strawman baseline: an exemplar more than STRAWMAN_X times faster on a timed case, unless
    the exemplar says why in a line `Headroom: <reason>` (its module docstring, or a comment
    of a HIP source): an algorithmic gap (an O(n^2) baseline of an O(n) operation, say) is fine
    when it is written down;
(b) a timed case under NOISE_US: the timer measures launch and noise there, not the kernel.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from arena.errors import ArenaError
from arena.task.task import Task
from arena.validation.findings import Findings

STRAWMAN_X = 10.0  # exemplar over baseline on one timed case
NOISE_US = 2.0  # a timed case's median below this is noise-dominated
HEADROOM = re.compile(r"^\W*Headroom:\s*(\S.*)$", re.MULTILINE)
_LABEL_FOLDER = re.compile(r"\[(.+)\]\s*$")  # suite labels: "<address> [<exemplar folder>]"


@dataclass(frozen=True)
class CaseTiming:
    """One timed case of one evaluation: the baseline's median and, for an exemplar, its own."""

    task: str  # the task's address
    exemplar: str  # the exemplar's folder; "" when the candidate is not an exemplar
    case: str
    baseline_us: float
    exemplar_us: float | None
    speedup: float  # baseline over exemplar (0 when not an exemplar)


def read_timings(paths: Sequence[Path]) -> list[CaseTiming]:
    """Every timed, declared case of every evaluation in the files (suite or evaluation JSON)."""
    found: list[CaseTiming] = []
    for path in paths:
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ArenaError(f"cannot read timings from {path}: {error}") from None
        if not isinstance(document, dict):
            raise ArenaError(f"{path}: expected a suite's or an evaluation's JSON object")
        exemplars = document.get("candidates") == "exemplars"
        evaluations = document.get("evaluations", [document] if "cases" in document else [])
        for evaluation in evaluations:
            found += _case_timings(evaluation, exemplars)
    return found


def _case_timings(evaluation: Mapping[str, Any], exemplars: bool) -> Iterator[CaseTiming]:
    match = _LABEL_FOLDER.search(str(evaluation.get("label", "")))
    folder = match.group(1) if exemplars and match else ""
    for case in evaluation.get("cases", ()):
        baseline, candidate = case.get("baseline"), case.get("candidate")
        if not case.get("timed") or case.get("hidden") or not baseline:
            continue
        mine = float(candidate["median_us"]) if folder and candidate else None
        speedup = float(case.get("speedup") or 0.0) if mine is not None else 0.0
        if mine and not speedup:
            speedup = float(baseline["median_us"]) / mine
        yield CaseTiming(
            str(evaluation.get("task", "")), folder, str(case["name"]), float(baseline["median_us"]), mine, speedup
        )


def headroom_reason(folder: Path) -> str:
    """The reason an exemplar gives for its headroom (a `Headroom:` line in its files), or ""."""
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
        except (OSError, UnicodeDecodeError):
            continue
        match = HEADROOM.search(text)
        if match:
            return match.group(1).strip().rstrip("*/\"' ")
    return ""


def check_timings(task: Task, timings: Sequence[CaseTiming], repo_root: Path) -> Findings:
    """Checks (a) and (b) on the timings of `task`."""
    findings = Findings()
    mine = [t for t in timings if t.task == task.address]
    if not mine:
        findings.notes.append("no timings of this task in the files given: checks a and b not run")
        return findings
    noisy: dict[str, list[str]] = {}  # case -> who takes under NOISE_US, and how long
    for timing in mine:
        slow = {"the baseline": timing.baseline_us}
        if timing.exemplar_us is not None:
            slow[f"exemplar {timing.exemplar}"] = timing.exemplar_us
        for who, us in slow.items():
            if us < NOISE_US and not any(line.startswith(f"{who} ") for line in noisy.get(timing.case, [])):
                noisy.setdefault(timing.case, []).append(f"{who} takes {us:.2f} us")
    for case, lines in noisy.items():
        findings.failures.append(
            f"timed case {case!r}: {', '.join(lines)}, under {NOISE_US:g} us: launch and noise dominate "
            "the time (make the case bigger)"
        )
    if not noisy:
        findings.passed.append(f"every timed case takes at least {NOISE_US:g} us")
    for folder in sorted({t.exemplar for t in mine if t.exemplar}):
        _check_headroom(task, folder, [t for t in mine if t.exemplar == folder], repo_root, findings)
    return findings


def _check_headroom(
    task: Task, folder: str, timings: Sequence[CaseTiming], repo_root: Path, findings: Findings
) -> None:
    far = [t for t in timings if t.speedup > STRAWMAN_X]
    best = max(t.speedup for t in timings)
    if not far:
        findings.passed.append(f"exemplar {folder} is at most {best:.2f}x the baseline (<= {STRAWMAN_X:g}x)")
        return
    cases = ", ".join(f"{t.case!r} {t.speedup:.1f}x" for t in far)
    reason = headroom_reason(repo_root / task.task_dir / folder)
    if reason:
        findings.passed.append(f"exemplar {folder} beats the baseline by more than {STRAWMAN_X:g}x ({cases}): {reason}")
    else:
        findings.failures.append(
            f"exemplar {folder} beats the baseline by more than {STRAWMAN_X:g}x ({cases}) with no reason "
            "written down: a strawman baseline? Make the baseline reasonable, or give the algorithmic "
            "reason in a line 'Headroom: <reason>' of the exemplar's module docstring"
        )
