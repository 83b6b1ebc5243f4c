"""The figures a report shows per result set and category, and per run.

A task run several times (repeated runs of one configuration) counts once: its speedup is the
geometric mean over its runs, its fast_p the share of its runs that were fast, its points the mean
of its runs'. An incorrect or untimed run counts 1.0 (the baseline stands), as in `arena suite`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

from arena.evaluation.evaluation import Evaluation
from arena.report.runs import ResultSet, Run
from arena.report.table import task_outcome
from arena.scoring.records import CaseResult
from arena.scoring.stats import FAST_P, summarize_suite, weighted_geomean


@dataclass(frozen=True)
class TaskSpeed:
    """One task in one set, over its runs."""

    task: str
    category: str
    runs: int
    correct_runs: int
    timed_runs: int  # correct and timed
    speedup: float  # geomean over runs, an incorrect or untimed run counting 1.0
    fast_p: Mapping[str, float]  # share of runs fast_p ("1.0" -> 0.5)
    points: float  # mean over runs
    noise_floor: float  # the largest over its runs (0 when none was timed)


@dataclass(frozen=True)
class CategorySummary:
    """One set's figures on one category."""

    set_name: str
    category: str
    tasks: int
    runs: int
    compiled_runs: int
    correct_runs: int
    timed_runs: int
    geomean_speedup: float  # over tasks, each its TaskSpeed.speedup
    fast_p: Mapping[str, float]  # mean over tasks of TaskSpeed.fast_p
    points: float  # the seed's points, summed over tasks (each the mean of its runs)
    cost_usd: float | None  # summed over runs that recorded a cost; None when none did
    cost_runs: int  # runs that recorded a cost
    tokens: int | None  # input + output, summed over runs that recorded tokens; None when none did
    token_runs: int


def task_speeds(runs: Sequence[Run]) -> list[TaskSpeed]:
    """One TaskSpeed per task, in the order tasks first appear."""
    by_task: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_task[run.task].append(run)
    return [task_speed(task, group) for task, group in by_task.items()]


def task_speed(task: str, runs: Sequence[Run]) -> TaskSpeed:
    suite = summarize_suite([task_outcome(run.evaluation) for run in runs])
    return TaskSpeed(
        task=task,
        category=runs[0].category,
        runs=len(runs),
        correct_runs=suite.correct,
        timed_runs=suite.timed,
        speedup=suite.geomean_speedup,
        fast_p=suite.fast_p,
        points=sum(run.evaluation.score.points for run in runs) / len(runs),
        noise_floor=max(run.evaluation.score.noise_floor for run in runs),
    )


def summarize_category(set_name: str, category: str, runs: Sequence[Run]) -> CategorySummary:
    speeds = task_speeds(runs)
    costs = [run.agent.cost_usd for run in runs if run.agent.cost_usd is not None]
    tokens = [run.agent.tokens for run in runs if run.agent.tokens is not None]
    return CategorySummary(
        set_name=set_name,
        category=category,
        tasks=len(speeds),
        runs=len(runs),
        compiled_runs=sum(1 for run in runs if run.evaluation.compiled),
        correct_runs=sum(1 for run in runs if run.evaluation.correct),
        timed_runs=sum(speed.timed_runs for speed in speeds),
        geomean_speedup=weighted_geomean([speed.speedup for speed in speeds]) if speeds else math.nan,
        fast_p={f"{p:.1f}": _mean([speed.fast_p[f"{p:.1f}"] for speed in speeds]) for p in FAST_P},
        points=sum(speed.points for speed in speeds),
        cost_usd=sum(costs) if costs else None,
        cost_runs=len(costs),
        tokens=sum(tokens) if tokens else None,
        token_runs=len(tokens),
    )


def summarize_set(result_set: ResultSet) -> list[CategorySummary]:
    """One summary per category the set has runs in, categories in order of first appearance."""
    by_category: dict[str, list[Run]] = defaultdict(list)
    for run in result_set.runs:
        by_category[run.category].append(run)
    return [summarize_category(result_set.name, category, runs) for category, runs in by_category.items()]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def timed_cases(evaluation: Evaluation) -> list[CaseResult]:
    return [case for case in evaluation.cases if case.timed and case.speedup > 0]


def speedup_interval(evaluation: Evaluation) -> tuple[float, float]:
    """The task speedup's interval: the timed cases' 95% interval ends combined as their speedups
    are (weighted geomean). Each case's interval is a bootstrap of its means; combining the ends
    bounds the task's geomean when every case sits at the same end. (0, 0) when nothing was timed."""
    cases = timed_cases(evaluation)
    if not cases or any(case.speedup_ci_low <= 0 for case in cases):
        return 0.0, 0.0
    weights = [case.weight for case in cases]
    return (
        weighted_geomean([case.speedup_ci_low for case in cases], weights),
        weighted_geomean([case.speedup_ci_high for case in cases], weights),
    )


def sol_range(evaluation: Evaluation) -> tuple[float, float]:
    """Lowest and highest speed-of-light fraction over the timed cases that have one; (0, 0) when none."""
    fractions = [case.sol_fraction for case in timed_cases(evaluation) if case.sol_fraction > 0]
    return (min(fractions), max(fractions)) if fractions else (0.0, 0.0)
