"""The report's plots, made with plotly: each function returns a figure's HTML <div> (no script
tag for plotly.js itself: the page embeds it once, so the file needs no network)."""

from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
import plotly.io as pio

from arena.report.compare import B_FASTER, TIE, SetComparison
from arena.report.runs import ResultSet, Run
from arena.report.summary import speedup_interval, task_speeds

HEIGHT = 440
TEMPLATE = "plotly_white"
# Plotly's own buttons link to its website; the page must not invite a network call.
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}
VERDICT_COLOURS = {B_FASTER: "#1a7f37", TIE: "#8c959f"}
A_FASTER_COLOUR = "#cf222e"


def figure_html(figure: go.Figure, div_id: str) -> str:
    """The figure as a <div> and its script; `div_id` keeps the output the same from run to run."""
    return str(pio.to_html(figure, full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG))


def short_task(address: str) -> str:
    """tasks/triton2triton/softmax:softmax -> softmax (the address when it has another shape)."""
    folder, _, name = address.partition(":")
    return name or folder.rsplit("/", 1)[-1]


def _layout(figure: go.Figure, title: str, y_title: str, log_y: bool = True) -> go.Figure:
    figure.update_layout(title=title, template=TEMPLATE, height=HEIGHT, legend_title_text="set")
    figure.update_yaxes(title_text=y_title, type="log" if log_y else "linear")
    return figure


def _interval_whiskers(runs: Sequence[Run], speedup: float) -> tuple[float, float]:
    """(minus, plus) error-bar lengths from `speedup` to the lowest and highest interval ends of the runs."""
    intervals = [speedup_interval(run.evaluation) for run in runs]
    lows = [low for low, _ in intervals if low > 0]
    highs = [high for _, high in intervals if high > 0]
    if not lows:
        return 0.0, 0.0
    return max(speedup - min(lows), 0.0), max(max(highs) - speedup, 0.0)


def speedup_per_task(sets: Sequence[ResultSet], category: str, div_id: str) -> str | None:
    """Bars: each set's speedup per task of `category` (geomean over its timed, correct runs), with
    whiskers to the lowest and highest 95% interval end of those runs. None when nothing was timed."""
    figure = go.Figure()
    for result_set in sets:
        runs = [run for run in result_set.runs if run.category == category]
        speeds = [speed for speed in task_speeds(runs) if speed.timed_runs]
        if not speeds:
            continue
        whiskers = [_interval_whiskers([r for r in runs if r.task == s.task], s.speedup) for s in speeds]
        figure.add_trace(
            go.Bar(
                name=result_set.name,
                x=[short_task(speed.task) for speed in speeds],
                y=[speed.speedup for speed in speeds],
                error_y={"type": "data", "symmetric": False, "arrayminus": [w[0] for w in whiskers],
                         "array": [w[1] for w in whiskers]},
                customdata=[[speed.runs, speed.timed_runs] for speed in speeds],
                hovertemplate="%{x}: %{y:.3f}x (%{customdata[1]} of %{customdata[0]} runs timed)",
            )
        )  # fmt: skip
    if not figure.data:
        return None
    figure.add_hline(y=1.0, line_dash="dash", line_color="#57606a")
    figure.update_layout(barmode="group")
    return figure_html(_layout(figure, f"{category}: speedup per task (95% interval whiskers)", "speedup"), div_id)


def speedup_distribution(sets: Sequence[ResultSet], div_id: str) -> str | None:
    """Boxes: the speedups of every correct, timed run of each set. None when no run was timed."""
    figure = go.Figure()
    for result_set in sets:
        timed = [run for run in result_set.runs if run.evaluation.correct and run.evaluation.score.geomean_speedup > 0]
        if timed:
            figure.add_trace(
                go.Box(
                    name=result_set.name,
                    y=[run.evaluation.score.geomean_speedup for run in timed],
                    text=[short_task(run.task) for run in timed],
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    hovertemplate="%{text}: %{y:.3f}x",
                )
            )
    if not figure.data:
        return None
    figure.add_hline(y=1.0, line_dash="dash", line_color="#57606a")
    return figure_html(_layout(figure, "Speedup of each correct, timed run, per set", "speedup"), div_id)


def points_against_cost(sets: Sequence[ResultSet], div_id: str) -> str | None:
    """Scatter: each run's points (the seed's) against its recorded cost. None when no run recorded one."""
    figure = go.Figure()
    for result_set in sets:
        costed = [run for run in result_set.runs if run.agent.cost_usd is not None]
        if costed:
            figure.add_trace(
                go.Scatter(
                    name=result_set.name,
                    mode="markers",
                    x=[run.agent.cost_usd for run in costed],
                    y=[run.evaluation.score.points for run in costed],
                    text=[short_task(run.task) for run in costed],
                    hovertemplate="%{text}: %{y:.1f} points for $%{x:.4f}",
                )
            )
    if not figure.data:
        return None
    figure.update_xaxes(title_text="cost of the agent's run (USD)")
    return figure_html(_layout(figure, "Points against cost, per run", "points", log_y=False), div_id)


def comparison_ratios(comparison: SetComparison, div_id: str) -> str | None:
    """Bars: B's speedup over A's per shared task, coloured by verdict (ties within the noise floor)."""
    if not comparison.tasks:
        return None
    tasks = comparison.tasks
    figure = go.Figure(
        go.Bar(
            x=[short_task(task.task) for task in tasks],
            y=[task.ratio for task in tasks],
            marker_color=[VERDICT_COLOURS.get(task.verdict, A_FASTER_COLOUR) for task in tasks],
            customdata=[[task.verdict, task.noise_floor * 100] for task in tasks],
            hovertemplate="%{x}: %{y:.3f}x, %{customdata[0]} (noise floor %{customdata[1]:.2f}%)",
            showlegend=False,
        )
    )
    figure.add_hline(y=1.0, line_dash="dash", line_color="#57606a")
    title = f"{comparison.b} over {comparison.a}, per task (green: B faster, grey: tie, red: A faster)"
    return figure_html(_layout(figure, title, "speedup ratio B / A"), div_id)
