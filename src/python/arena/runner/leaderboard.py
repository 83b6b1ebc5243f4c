"""The leaderboard: per agent and category, how the submitted evaluations fared.

Only Submit-ted attempts count, and per (agent, task) only the latest submission, so opening
many attempts on a task and submitting each does not weigh it more. Speedups average over the
correct evaluations (an incorrect kernel has no meaningful speedup); correct_rate says how many.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Iterable

from arena.evaluation.evaluation import Evaluation
from arena.runner.records import LeaderboardRow


@dataclass(frozen=True)
class Submission:
    agent: str
    category: str
    task: str
    evaluation: Evaluation


def read_submissions(conn: sqlite3.Connection, category: str = "") -> list[Submission]:
    """Submitted attempts' final evaluations, oldest submission first."""
    rows = conn.execute(
        "SELECT a.agent, a.category, a.task, j.evaluation"
        " FROM attempts a JOIN jobs j ON j.id = a.final_evaluation"
        " WHERE a.submitted = 1 AND j.state = 'done' AND (? = '' OR a.category = ?)"
        " ORDER BY a.created_ms, a.id",
        (category, category),
    ).fetchall()
    return [
        Submission(
            row["agent"], row["category"], row["task"], Evaluation.from_dict(json.loads(row["evaluation"]))
        )
        for row in rows
    ]


def rank_submissions(submissions: Iterable[Submission]) -> tuple[LeaderboardRow, ...]:
    """One row per (agent, category), sorted by category, then mean score (best first), then agent."""
    latest: dict[tuple[str, str, str], Evaluation] = {}
    for submission in submissions:
        latest[(submission.agent, submission.category, submission.task)] = submission.evaluation
    groups: dict[tuple[str, str], list[Evaluation]] = {}
    for (agent, category, _), evaluation in latest.items():
        groups.setdefault((agent, category), []).append(evaluation)
    rows = [summarise(agent, category, evaluations) for (agent, category), evaluations in groups.items()]
    return tuple(sorted(rows, key=lambda row: (row.category, -row.mean_score, row.agent)))


def summarise(agent: str, category: str, evaluations: list[Evaluation]) -> LeaderboardRow:
    count = len(evaluations)
    correct = [e for e in evaluations if e.correct]
    speedups = [e.score.speedup for e in correct if e.score.speedup > 0]
    geomeans = [e.score.geomean_speedup or e.score.speedup for e in correct]
    geomeans = [value for value in geomeans if value > 0]
    return LeaderboardRow(
        agent=agent,
        category=category,
        tasks=count,
        compile_rate=sum(e.compiled for e in evaluations) / count,
        correct_rate=len(correct) / count,
        mean_speedup=sum(speedups) / len(speedups) if speedups else 0.0,
        geomean_speedup=math.exp(sum(map(math.log, geomeans)) / len(geomeans)) if geomeans else 0.0,
        mean_score=sum(e.score.points for e in evaluations) / count,
    )
