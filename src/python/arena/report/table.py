"""Plain-text reports: one evaluation, and a suite's table. Pure functions from records to text."""

from __future__ import annotations

from typing import Sequence

from arena.evaluation.evaluation import Evaluation, Status
from arena.scoring.records import CaseResult
from arena.scoring.stats import SuiteSummary, TaskOutcome

NEEDS_GPU = "needs a GPU"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [bool(rows) and all(_is_number(row[i]) for row in cells[1:]) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(row, widths, numeric)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def _is_number(cell: str) -> bool:
    """A cell that reads as a number, or "-" (a number that is missing)."""
    try:
        float(cell)
    except ValueError:
        return cell == "-"
    return True


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _speedup_cell(case: CaseResult) -> str:
    if not case.speedup:
        return "-"
    noise = " ~" if case.within_noise else ""
    return f"{case.speedup:.3f} [{case.speedup_ci_low:.3f}, {case.speedup_ci_high:.3f}]{noise}"


def _time_cell(case: CaseResult, side: str) -> str:
    timing = getattr(case, side)
    return f"{timing.mean_us:.2f}" if timing else "-"


def format_cases(evaluation: Evaluation) -> str:
    rows = [
        (
            case.name + (" (hidden)" if case.hidden else ""),
            "timed" if case.timed else "check",
            "yes" if case.correct else "NO",
            _time_cell(case, "baseline"),
            _time_cell(case, "candidate"),
            _speedup_cell(case),
            f"{case.sol_fraction:.2f}" if case.sol_fraction else "-",
        )
        for case in evaluation.cases
    ]
    headers = ("case", "kind", "correct", "base us", "cand us", "speedup [95% CI]", "SoL")
    return format_table(headers, rows)


def format_evaluation(evaluation: Evaluation) -> str:
    """The short human report `arena evaluate` prints."""
    score = evaluation.score
    lines = [
        f"task       {evaluation.task}",
        f"status     {evaluation.status.value}" + ("  (cached)" if evaluation.cached else ""),
        f"compiled   {_cell(evaluation.compiled)}    correct {_cell(correct_cell(evaluation))}",
    ]
    if evaluation.cases:
        lines += ["", format_cases(evaluation), ""]
    if score.speedup:
        fast = " ".join(f"fast_{p}={'yes' if v else 'no'}" for p, v in sorted(score.fast_p.items()))
        lines.append(
            f"speedup    {score.speedup:.3f} (mean of cases)   geomean {score.geomean_speedup:.3f}   "
            f"noise floor {score.noise_floor * 100:.2f}%   {fast}"
        )
    elif evaluation.status is Status.NEEDS_DEVICE or evaluation.correct:
        lines.append(f"speedup    not measured ({NEEDS_GPU} to time)")
    lines.append(f"score      {score.points:.1f} points   reward {score.reward:+.4f}")
    if evaluation.errors:
        lines += ["errors"] + [f"  - {error}" for error in evaluation.errors]
    lines.append(f"id         {evaluation.id}   key {evaluation.cache_key[:16]}")
    return "\n".join(lines)


def format_suite(evaluations: Sequence[tuple[str, Evaluation]], summary: SuiteSummary) -> str:
    """The final table of `arena suite`: one row per (label, evaluation), then the suite's figures."""
    rows = [
        (
            label,
            evaluation.status.value,
            evaluation.compiled,
            correct_cell(evaluation),
            f"{evaluation.score.geomean_speedup:.3f}" if evaluation.score.geomean_speedup else "-",
            f"{evaluation.score.points:.1f}",
            "yes" if evaluation.cached else "",
        )
        for label, evaluation in evaluations
    ]
    table = format_table(("task", "status", "compiled", "correct", "speedup", "points", "cached"), rows)
    fast = "  ".join(f"fast_{p} {share * 100:.0f}%" for p, share in sorted(summary.fast_p.items()))
    speed = f"{summary.geomean_speedup:.3f}" if summary.timed else "- (nothing timed)"
    unchecked = sum(evaluation.status is Status.NEEDS_DEVICE for _, evaluation in evaluations)
    totals = f"{summary.correct}/{summary.tasks} correct" + (f", {unchecked} unchecked" if unchecked else "")
    totals += f"   geomean speedup {speed}"
    return f"{table}\n\n{totals}   {fast}"


def correct_cell(evaluation: Evaluation) -> object:
    """Whether it was correct; "unchecked" where this machine could compile it but not check it
    (NEEDS_DEVICE), which is not a wrong answer."""
    return "unchecked" if evaluation.status is Status.NEEDS_DEVICE else evaluation.correct


def task_outcome(evaluation: Evaluation) -> TaskOutcome:
    """One evaluation as a row of a suite: correct, its geomean speedup, and whether that is noise."""
    timed = [case for case in evaluation.cases if case.timed and case.speedup > 0]
    return TaskOutcome(
        task=evaluation.task,
        correct=evaluation.correct,
        speedup=evaluation.score.geomean_speedup,
        within_noise=bool(timed) and all(case.within_noise for case in timed),
    )
