"""A paired comparison of two result sets over the tasks they share (and their repeated runs).

Per task, each side's speedup is the geometric mean over its runs (an incorrect or untimed run
counts 1.0, as in `arena suite`), and the ratio is B's over A's. A task is a tie when the ratio is
within the task's noise floor (the larger floor either side measured: how far the baseline timed
against itself strays from 1.0). Over tasks: the geomean of the ratios with a bootstrap interval
(tasks resampled, and within each task each side's runs), wins/ties/losses, fast_p of each side,
and the Wilcoxon signed-rank test on the log ratios.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from arena.report.runs import ResultSet, Run
from arena.report.signed_rank import SignedRankTest, signed_rank_test
from arena.report.summary import task_speed
from arena.report.table import task_outcome
from arena.scoring.stats import FAST_P, LEVEL, RESAMPLES

A_FASTER, B_FASTER, TIE = "A faster", "B faster", "tie"


@dataclass(frozen=True)
class TaskComparison:
    task: str
    category: str
    runs_a: int
    runs_b: int
    speedup_a: float  # geomean over A's runs (incorrect or untimed: 1.0)
    speedup_b: float
    ratio: float  # speedup_b / speedup_a
    noise_floor: float  # relative; the larger of the two sides' floors
    verdict: str  # A faster | B faster | tie (the ratio within the noise floor)


@dataclass(frozen=True)
class SetComparison:
    a: str  # the sets' names
    b: str
    tasks: tuple[TaskComparison, ...]  # the shared tasks, in A's order
    only_a: tuple[str, ...]  # tasks one side has and the other lacks: not compared
    only_b: tuple[str, ...]
    ratio: float  # geomean over shared tasks of B's speedup over A's; NaN with no shared task
    ratio_ci_low: float  # bootstrap interval at `level`
    ratio_ci_high: float
    a_faster: int
    b_faster: int
    ties: int
    fast_p_a: Mapping[str, float]  # over the shared tasks: mean of each task's share of fast runs
    fast_p_b: Mapping[str, float]
    fast_p_difference: Mapping[str, float]  # B minus A
    signed_rank: SignedRankTest  # on the per-task log ratios
    level: float = LEVEL
    resamples: int = RESAMPLES
    seed: int = 0


def run_log_speedups(runs: Sequence[Run]) -> np.ndarray:
    """log of each run's task speedup, 1.0 (log 0) where incorrect or untimed."""
    outcomes = [task_outcome(run.evaluation) for run in runs]
    return np.array([math.log(o.speedup) if o.correct and o.speedup > 0 else 0.0 for o in outcomes])


def verdict_for(ratio: float, noise_floor: float) -> str:
    if abs(math.log(ratio)) <= math.log1p(noise_floor):
        return TIE
    return B_FASTER if ratio > 1 else A_FASTER


def bootstrap_ratio_interval(
    log_a: Sequence[np.ndarray], log_b: Sequence[np.ndarray], seed: int = 0, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """Percentile interval at LEVEL of the geomean ratio, resampling tasks and, within each task,
    each side's runs (so that a task measured once contributes its one value every time)."""
    if not log_a:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    per_task = np.empty((len(log_a), resamples))
    for index, (a, b) in enumerate(zip(log_a, log_b)):
        mean_a = a[rng.integers(0, a.size, size=(resamples, a.size))].mean(axis=1)
        mean_b = b[rng.integers(0, b.size, size=(resamples, b.size))].mean(axis=1)
        per_task[index] = mean_b - mean_a
    picks = rng.integers(0, len(log_a), size=(resamples, len(log_a)))
    estimates = per_task[picks, np.arange(resamples)[:, None]].mean(axis=1)
    tail = (1.0 - LEVEL) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return math.exp(float(low)), math.exp(float(high))


def compare_sets(a: ResultSet, b: ResultSet, seed: int = 0) -> SetComparison:
    runs_a, runs_b = _by_task(a.runs), _by_task(b.runs)
    shared = [task for task in runs_a if task in runs_b]
    tasks = tuple(_compare_task(task, runs_a[task], runs_b[task]) for task in shared)
    log_a = [run_log_speedups(runs_a[task]) for task in shared]
    log_b = [run_log_speedups(runs_b[task]) for task in shared]
    differences = [math.log(task.ratio) for task in tasks]
    low, high = bootstrap_ratio_interval(log_a, log_b, seed)
    fast_a = _fast_p([task_speed(task, runs_a[task]).fast_p for task in shared])
    fast_b = _fast_p([task_speed(task, runs_b[task]).fast_p for task in shared])
    return SetComparison(
        a=a.name,
        b=b.name,
        tasks=tasks,
        only_a=tuple(task for task in runs_a if task not in runs_b),
        only_b=tuple(task for task in runs_b if task not in runs_a),
        ratio=math.exp(sum(differences) / len(differences)) if differences else math.nan,
        ratio_ci_low=low,
        ratio_ci_high=high,
        a_faster=sum(1 for task in tasks if task.verdict == A_FASTER),
        b_faster=sum(1 for task in tasks if task.verdict == B_FASTER),
        ties=sum(1 for task in tasks if task.verdict == TIE),
        fast_p_a=fast_a,
        fast_p_b=fast_b,
        fast_p_difference={p: fast_b[p] - fast_a[p] for p in fast_a},
        signed_rank=signed_rank_test(differences),
        seed=seed,
    )


def _by_task(runs: Sequence[Run]) -> dict[str, list[Run]]:
    grouped: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        grouped[run.task].append(run)
    return grouped


def _compare_task(task: str, runs_a: Sequence[Run], runs_b: Sequence[Run]) -> TaskComparison:
    side_a, side_b = task_speed(task, runs_a), task_speed(task, runs_b)
    ratio = side_b.speedup / side_a.speedup
    floor = max(side_a.noise_floor, side_b.noise_floor)
    return TaskComparison(
        task=task,
        category=side_a.category,
        runs_a=len(runs_a),
        runs_b=len(runs_b),
        speedup_a=side_a.speedup,
        speedup_b=side_b.speedup,
        ratio=ratio,
        noise_floor=floor,
        verdict=verdict_for(ratio, floor),
    )


def _fast_p(shares: Sequence[Mapping[str, float]]) -> dict[str, float]:
    keys = [f"{p:.1f}" for p in FAST_P]
    return {key: sum(share[key] for share in shares) / len(shares) if shares else 0.0 for key in keys}
