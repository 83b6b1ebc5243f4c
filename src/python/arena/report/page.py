"""The HTML report: one self-contained file (plotly.js inline, no link out), from result sets.

Sections: the figures per set and category, the plots, the paired comparison when one is asked
for, one row per run, and each run's evidence (diff, evaluation record, transcript, keys).
Every text that came from a file is escaped; only this module writes markup.
"""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from typing import Sequence

import plotly.offline

from arena.report import plots
from arena.report.compare import SetComparison
from arena.report.evidence import candidate_diff, reproducibility_keys
from arena.report.runs import ResultSet, Run
from arena.report.sources import Library
from arena.report.summary import CategorySummary, sol_range, speedup_interval, summarize_set
from arena.scoring.stats import FAST_P

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #1f2328; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f8fa; padding: 0.6em; overflow-x: auto; max-height: 40em; font-size: 12px; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
.added { color: #1a7f37; } .removed { color: #cf222e; } .note { color: #57606a; }
"""
FAST_KEYS = tuple(f"{p:.1f}" for p in FAST_P)


class Markup(str):
    """Text that is already HTML (built here); any other str is escaped when written."""


class Number(str):
    """A number already formatted: right-aligned like one."""


def _text(value: object) -> str:
    return value if isinstance(value, Markup) else html.escape(str(value))


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], css_class: str) -> Markup:
    """A table; float and int cells are right-aligned, Markup cells written as they are."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for value in row:
            numeric = isinstance(value, (int, float, Number)) and not isinstance(value, bool)
            shown = f"{value:.3f}" if isinstance(value, float) else value
            cells.append(f'<td class="number">{_text(shown)}</td>' if numeric else f"<td>{_text(value)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return Markup(f'<table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _optional(value: float | int | None, digits: int = 4, missing: str = "not recorded") -> str:
    if value is None:
        return missing
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def summary_rows(summaries: Sequence[CategorySummary]) -> list[list[object]]:
    rows: list[list[object]] = []
    for s in summaries:
        rows.append([
            s.set_name, s.category, s.tasks, s.runs, f"{s.compiled_runs}/{s.runs}", f"{s.correct_runs}/{s.runs}",
            s.timed_runs, s.geomean_speedup if s.timed_runs else "- (nothing timed)",
            *[Number(f"{s.fast_p[key] * 100:.0f}%") for key in FAST_KEYS], Number(f"{s.points:.1f}"),
            _optional(s.cost_usd) + (f" ({s.cost_runs} runs)" if s.cost_usd is not None else ""),
            _optional(s.tokens) + (f" ({s.token_runs} runs)" if s.tokens is not None else ""),
        ])  # fmt: skip
    return rows


SUMMARY_HEADERS = (
    "set", "category", "tasks", "runs", "compiled", "correct", "timed", "geomean speedup",
    *[f"fast_{key}" for key in FAST_KEYS], "points (seed)", "cost USD", "tokens",
)  # fmt: skip
RUN_HEADERS = (
    "set", "category", "task", "run", "status", "speedup [95% CI]", "SoL fraction", "noise floor", "points", "cost USD",
    "tokens", "evidence",
)  # fmt: skip


def speedup_cell(run: Run) -> str:
    speedup = run.evaluation.score.geomean_speedup
    if not speedup:
        return "untimed"
    low, high = speedup_interval(run.evaluation)
    noise = " (within noise)" if all(c.within_noise for c in run.evaluation.cases if c.timed and c.speedup) else ""
    interval = f" [{low:.3f}, {high:.3f}]" if low else " [no interval recorded]"
    return f"{speedup:.3f}{interval}{noise}"


def sol_cell(run: Run) -> str:
    low, high = sol_range(run.evaluation)
    if not high:
        return "not recorded"
    return f"{low:.2f}" if low == high else f"{low:.2f} to {high:.2f}"


def run_rows(sets: Sequence[ResultSet]) -> list[list[object]]:
    rows: list[list[object]] = []
    for set_index, result_set in enumerate(sets):
        counts = Counter(run.task for run in result_set.runs)
        seen: Counter[str] = Counter()
        for run_index, run in enumerate(result_set.runs):
            seen[run.task] += 1
            evaluation = run.evaluation
            status = evaluation.status.value + (" (task changed since)" if run.task_changed else "")
            link = Markup(f'<a href="#{run_anchor(set_index, run_index)}">evidence</a>')
            rows.append([
                result_set.name, run.category, run.label, f"{seen[run.task]} of {counts[run.task]}", status,
                speedup_cell(run), sol_cell(run),
                Number(f"{evaluation.score.noise_floor * 100:.2f}%" if evaluation.score.noise_floor else "-"),
                Number(f"{evaluation.score.points:.1f}"), Number(_optional(run.agent.cost_usd, missing="-")),
                Number(_optional(run.agent.tokens, missing="-")), link,
            ])  # fmt: skip
    return rows


def run_anchor(set_index: int, run_index: int) -> str:
    return f"run-{set_index}-{run_index}"


def diff_block(run: Run, library: Library) -> Markup:
    if run.candidate is None:
        digest = run.evaluation.candidate_digest[:16] or "none"
        return Markup(f'<p class="note">The candidate\'s files were not found (digest {html.escape(digest)}): '
                      "neither a submission folder given, the task's own files, nor files kept beside the score "
                      "cache hold it.</p>")  # fmt: skip
    text = candidate_diff(library.baseline(run.task), run.candidate)
    if not text:
        return Markup('<p class="note">The baseline itself (a no-op): no file differs from the baseline.</p>')
    lines = []
    for line in text.splitlines():
        css = "added" if line.startswith("+") else "removed" if line.startswith("-") else ""
        lines.append(f'<span class="{css}">{html.escape(line)}</span>' if css else html.escape(line))
    changed = " (against the baseline as it is now; the task changed since)" if run.task_changed else ""
    return Markup(f'<p>Diff against the baseline{changed}:</p><pre class="diff">{chr(10).join(lines)}</pre>')


def transcript_block(run: Run) -> Markup:
    agent = run.agent
    if not agent.transcript_name:
        return Markup('<p class="note">No transcript recorded.</p>')
    cut = f" (the first {len(agent.transcript)} characters)" if agent.transcript_cut else ""
    return Markup(
        f"<details><summary>Transcript: {html.escape(agent.transcript_name)}{cut}</summary>"
        f'<pre class="transcript">{html.escape(agent.transcript)}</pre></details>'
    )


def evidence_block(run: Run, anchor: str, set_name: str, library: Library) -> Markup:
    record = json.dumps(run.evaluation.to_dict(), indent=2, sort_keys=True)
    keys = [(name, value or "not recorded") for name, value in reproducibility_keys(run.evaluation)]
    return Markup(
        f'<details id="{anchor}" class="evidence"><summary>{html.escape(set_name)}: {html.escape(run.label)} '
        f"({html.escape(run.evaluation.status.value)}; from {html.escape(run.source)})</summary>"
        f"{diff_block(run, library)}{transcript_block(run)}"
        f'<details><summary>Evaluation record</summary><pre class="record">{html.escape(record)}</pre></details>'
        f"<p>Reproducibility keys:</p>{table(('key', 'value'), keys, 'keys')}</details>"
    )


def comparison_section(comparison: SetComparison) -> Markup:
    c = comparison
    if not c.tasks:
        return Markup(f'<section id="comparison"><h2>Comparison</h2><p>{html.escape(c.a)} and {html.escape(c.b)} '
                      "share no task: nothing to compare.</p></section>")  # fmt: skip
    test = c.signed_rank
    verdicts = f"{c.b_faster} B faster, {c.ties} ties, {c.a_faster} A faster"
    lines = [
        f"A = {c.a}, B = {c.b}: {len(c.tasks)} shared task(s); {verdicts} (ties: within the task's noise floor).",
        f"Geomean speedup ratio B / A: {c.ratio:.3f}, {c.level * 100:.0f}% bootstrap interval "
        f"[{c.ratio_ci_low:.3f}, {c.ratio_ci_high:.3f}] ({c.resamples} resamples of tasks and runs).",
        f"Wilcoxon signed-rank test on log ratios: W+ = {test.statistic:g} over {test.n} non-zero "
        f"difference(s), two-sided p = {test.p_value:.4g} ({test.method}).",
    ]
    if c.only_a or c.only_b:
        lines.append(f"Not compared (in one set only): {len(c.only_a)} task(s) of A, {len(c.only_b)} of B.")
    fast = table(("fast_p", "A", "B", "B - A"), [
        (f"fast_{key}", f"{c.fast_p_a[key] * 100:.0f}%", f"{c.fast_p_b[key] * 100:.0f}%",
         f"{c.fast_p_difference[key] * 100:+.0f} pts") for key in c.fast_p_a
    ], "comparison-fast-p")  # fmt: skip
    rows = [(t.category, t.task, f"{t.runs_a}/{t.runs_b}", t.speedup_a, t.speedup_b, t.ratio,
             f"{t.noise_floor * 100:.2f}%", t.verdict) for t in c.tasks]  # fmt: skip
    tasks = table(("category", "task", "runs A/B", "speedup A", "speedup B", "B / A", "noise floor", "verdict"), rows,
                  "comparison")  # fmt: skip
    figure = plots.comparison_ratios(c, "plot-comparison") or ""
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return Markup(f'<section id="comparison"><h2>Comparison</h2>{body}{fast}{tasks}{figure}</section>')


def plots_section(sets: Sequence[ResultSet]) -> Markup:
    categories = list(dict.fromkeys(run.category for result_set in sets for run in result_set.runs))
    figures = [plots.speedup_per_task(sets, category, f"plot-speedup-{category}") for category in categories]
    figures += [plots.speedup_distribution(sets, "plot-distribution"), plots.points_against_cost(sets, "plot-cost")]
    notes = []
    if not any(figures[: len(categories) + 1]):
        notes.append("No run was timed (a GPU is needed to time): no speedup plots.")
    if figures[-1] is None:
        notes.append("No run recorded a cost: no plot of points against cost.")
    shown = "".join(figure for figure in figures if figure)
    shown_notes = "".join(f'<p class="note">{html.escape(note)}</p>' for note in notes)
    return Markup(f'<section id="plots"><h2>Plots</h2>{shown_notes}{shown}</section>')


def sets_section(sets: Sequence[ResultSet]) -> Markup:
    parts = []
    for result_set in sets:
        configuration = "".join(
            f"<li>{html.escape(key)}: {html.escape(value)}</li>" for key, value in result_set.configuration.items()
        )
        sources = "".join(f"<li>{html.escape(source)}</li>" for source in result_set.sources)
        missing = "".join(f"<li>{html.escape(line)}</li>" for line in result_set.not_scored)
        parts.append(
            f"<h3>{html.escape(result_set.name)}</h3><p>{len(result_set.runs)} run(s), read from:</p><ul>{sources}</ul>"
            + (f"<p>Configuration (agent.json):</p><ul>{configuration}</ul>" if configuration else "")
            + (f"<p>Not scored (no evaluation):</p><ul>{missing}</ul>" if missing else "")
        )
    return Markup(f'<section id="sets"><h2>Sets</h2>{"".join(parts)}</section>')


def render_report(
    sets: Sequence[ResultSet], library: Library, comparison: SetComparison | None = None, created_unix: float = 0.0
) -> str:
    """The whole page. `created_unix` (default: now) is printed as the time the report was made."""
    created = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(created_unix or time.time()))
    summaries = [summary for result_set in sets for summary in summarize_set(result_set)]
    summary_table = table(SUMMARY_HEADERS, summary_rows(summaries), "summary")
    evidence = "".join(
        evidence_block(run, run_anchor(i, j), result_set.name, library)
        for i, result_set in enumerate(sets)
        for j, run in enumerate(result_set.runs)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Kernel arena report</title>'
        f'<style>{STYLE}</style><script type="text/javascript">{plotly.offline.get_plotlyjs()}</script></head><body>'
        f'<h1>Kernel arena report</h1><p class="note">Made {created} from {len(sets)} set(s).</p>'
        f'<section id="summary"><h2>Per set and category</h2>{summary_table}'
        '<p class="note">Repeated runs of a task count once: geomean over its runs (an incorrect or untimed run '
        "counts 1.0), fast_p the share of its runs, points the mean of its runs, summed over tasks.</p></section>"
        f"{plots_section(sets)}{comparison_section(comparison) if comparison else ''}"
        f'<section id="runs"><h2>Per task</h2>{table(RUN_HEADERS, run_rows(sets), "runs")}</section>'
        f'<section id="evidence"><h2>Evidence</h2>{evidence}</section>{sets_section(sets)}</body></html>\n'
    )
