"""The leaderboard: per agent and category, how the agent's attempts fared.

The rule, made so that retrying cannot raise a rank: every attempt an agent opens counts once
it is closed, and a task's figures are the mean over its attempts. An attempt is closed when it
is submitted (its final evaluation counts) or when its deadline passes without a submission (it
counts as nothing delivered: not compiled, not correct, 0 points). Attempts per agent and task
are capped (Runner max_attempts), so there is no best-of-N to pick from, and dropping a bad
attempt is not possible: it counts at its deadline either way. Attempts still open count for
nothing yet. Speedups average over the correct attempts (an incorrect kernel has no meaningful
speedup); correct_rate says how many there are. Every task weighs the same in a row.

Accounting figures are plain means over a row's closed attempts: checks and scored evaluations
used from the runner's own counters (over every attempt), tokens, cost, turns, tool calls and
wall time from the usage operators recorded (over the attempts that have it; None when none does).
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Iterable, Sequence

from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.accounting import usage_from_row
from arena.runner.records import LeaderboardRow, Usage


@dataclass(frozen=True)
class Submission:
    """One closed attempt: its final evaluation, or None when its deadline passed without one."""

    agent: str
    category: str
    task: str
    evaluation: Evaluation | None
    checks: int = 0  # free checks the attempt used
    evaluations: int = 0  # scored evaluations the attempt used (not counting those the runner failed)
    usage: Usage | None = None  # what its agent spent, when an operator recorded it


def read_submissions(conn: sqlite3.Connection, category: str = "", now_ms: int = 0) -> list[Submission]:
    """Closed attempts, oldest first: submitted ones with their final evaluation, and those whose
    deadline was before `now_ms` without a submission."""
    rows = conn.execute(
        "SELECT a.agent, a.category, a.task, a.submitted, a.checks_used, j.evaluation, e.count AS evaluations,"
        " u.input_tokens, u.output_tokens, u.cached_tokens, u.cost_usd, u.turns, u.tool_calls, u.wall_s"
        " FROM attempts a LEFT JOIN jobs j ON j.id = a.final_evaluation AND j.state = 'done'"
        " LEFT JOIN (SELECT attempt, COUNT(*) AS count FROM jobs WHERE kind = 'scored' AND state != 'failed'"
        " GROUP BY attempt) e ON e.attempt = a.id"
        " LEFT JOIN usage u ON u.attempt = a.id"
        " WHERE (a.submitted = 1 AND j.id IS NOT NULL OR a.submitted = 0 AND a.deadline_ms < ?)"
        " AND (? = '' OR a.category = ?)"
        " ORDER BY a.created_ms, a.id",
        (now_ms, category, category),
    ).fetchall()
    return [
        Submission(
            row["agent"],
            row["category"],
            row["task"],
            Evaluation.from_dict(json.loads(row["evaluation"])) if row["submitted"] else None,
            checks=row["checks_used"],
            evaluations=row["evaluations"] or 0,
            usage=usage_from_row(row),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class TaskFigures:
    """One agent's figures on one task: means over its closed attempts."""

    compiled: float
    correct: float
    points: float
    speedup: float  # mean over the correct attempts; 0 when none
    geomean_speedup: float  # geometric mean over the correct attempts; 0 when none
    unchecked: float = 0.0  # attempts whose submission compiled but needed a GPU to check


def task_figures(outcomes: list[Evaluation | None]) -> TaskFigures:
    count = len(outcomes)
    delivered = [e for e in outcomes if e is not None]
    correct = [e for e in delivered if e.correct]
    speedups = [e.score.speedup for e in correct if e.score.speedup > 0]
    geomeans = [value for value in (e.score.geomean_speedup or e.score.speedup for e in correct) if value > 0]
    return TaskFigures(
        compiled=sum(e.compiled for e in delivered) / count,
        correct=len(correct) / count,
        points=sum(e.score.points for e in delivered) / count,
        speedup=sum(speedups) / len(speedups) if speedups else 0.0,
        geomean_speedup=geometric_mean(geomeans),
        unchecked=sum(e.status is Status.NEEDS_DEVICE for e in delivered) / count,
    )


def rank_submissions(submissions: Iterable[Submission]) -> tuple[LeaderboardRow, ...]:
    """One row per (agent, category), sorted by category, then mean score (best first), then agent."""
    attempts: dict[tuple[str, str, str], list[Evaluation | None]] = {}
    closed: dict[tuple[str, str], list[Submission]] = {}
    for submission in submissions:
        attempts.setdefault((submission.agent, submission.category, submission.task), []).append(submission.evaluation)
        closed.setdefault((submission.agent, submission.category), []).append(submission)
    groups: dict[tuple[str, str], list[TaskFigures]] = {}
    for (agent, category, _), outcomes in attempts.items():
        groups.setdefault((agent, category), []).append(task_figures(outcomes))
    rows = [summarise(agent, category, tasks, closed[agent, category]) for (agent, category), tasks in groups.items()]
    return tuple(sorted(rows, key=lambda row: (row.category, -row.mean_score, row.agent)))


def summarise(agent: str, category: str, tasks: list[TaskFigures], closed: list[Submission]) -> LeaderboardRow:
    count = len(tasks)
    speedups = [task.speedup for task in tasks if task.speedup > 0]
    usages = [submission.usage for submission in closed if submission.usage is not None]
    return LeaderboardRow(
        agent=agent,
        category=category,
        tasks=count,
        compile_rate=sum(task.compiled for task in tasks) / count,
        correct_rate=sum(task.correct for task in tasks) / count,
        unchecked_rate=sum(task.unchecked for task in tasks) / count,
        mean_speedup=sum(speedups) / len(speedups) if speedups else 0.0,
        geomean_speedup=geometric_mean([task.geomean_speedup for task in tasks if task.geomean_speedup > 0]),
        mean_score=sum(task.points for task in tasks) / count,
        mean_checks=mean([submission.checks for submission in closed]) or 0.0,
        mean_evaluations=mean([submission.evaluations for submission in closed]) or 0.0,
        mean_input_tokens=mean([usage.input_tokens for usage in usages]),
        mean_output_tokens=mean([usage.output_tokens for usage in usages]),
        mean_cached_tokens=mean([usage.cached_tokens for usage in usages]),
        mean_cost_usd=mean([usage.cost_usd for usage in usages if usage.cost_usd is not None]),
        mean_turns=mean([usage.turns for usage in usages]),
        mean_tool_calls=mean([usage.tool_calls for usage in usages]),
        mean_wall_s=mean([usage.wall_s for usage in usages]),
    )


def mean(values: Sequence[float]) -> float | None:
    """The mean of `values`; None when there are none (a blank, not a zero)."""
    return sum(values) / len(values) if values else None


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else 0.0
