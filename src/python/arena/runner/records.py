"""The runner's records as its callers see them: attempts, evaluation progress, task views and
leaderboard rows. Plain data: the client SDK and arena.api.convert import these and nothing of
the runner's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from arena.evaluation.evaluation import Evaluation
from arena.task.task import Case, TensorSpec, Tolerance


@dataclass(frozen=True)
class Attempt:
    """An attempt as agents see it."""

    id: str
    task: str  # the task's address
    agent: str  # who opened it; only they may use it
    deadline_unix_ms: int  # Evaluate is refused after this instant
    iterations_left: int  # evaluations still allowed
    submitted: bool = False  # Submit was called; the attempt is closed
    final_evaluation: str = ""  # the evaluation Submit recorded
    category: str = ""  # the task's category, kept for the leaderboard
    checks_used: int = 0  # free checks (compile and declared cases, no timing) spent so far
    finalized: bool = False  # the runner submitted the workspace's files (Finalize), not the agent
    checks_left: int = 0  # free checks still allowed: the runner's limit less checks_used


@dataclass(frozen=True)
class Usage:
    """What an agent spent on one attempt, as its operator recorded it (RecordUsage)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens served from the provider's prompt cache
    cost_usd: float | None = None  # None: neither the CLI nor a price table said
    turns: int = 0  # model turns
    tool_calls: int = 0
    wall_s: float = 0.0  # the agent process's wall time


@dataclass(frozen=True)
class Progress:
    """One step of a job, as Evaluate streams it."""

    stage: str  # queued | running | done
    evaluation_id: str
    queue_position: int = 0  # jobs ahead of this one while queued
    evaluation: Evaluation | None = None  # set when done


@dataclass(frozen=True)
class TaskView:
    """The agent's copy of a task; mirrors arena.v1.Task."""

    address: str
    name: str
    category: str
    digest: str  # the task digest: a changed task is a different task
    task_dir: str
    description: str
    signature: str
    entry: str  # file:symbol
    editable_files: tuple[str, ...]  # the allow-list a candidate's paths must fall in
    baseline_files: Mapping[str, bytes]  # path relative to task_dir -> content
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    cases: tuple[Case, ...]  # the declared cases; hidden ones are drawn at evaluation time
    forbidden: tuple[str, ...]
    budget_seconds: int
    iterations: int
    archs: tuple[str, ...]
    tolerances: Mapping[str, Tolerance]  # by dtype, the task's overrides merged over the defaults
    scalars: Mapping[str, float | int | str]  # keyword arguments; a str names a dim
    reference_platform: str  # where reference timings are taken; "" when none is named
    points_compiled: float  # the score: these points once the candidate compiles,
    points_correct: float  # these more when correct on every case (declared and hidden),
    points_per_speedup: float  # then these times the speedup over the baseline
    scoring_rule: str  # the same rule in words


@dataclass(frozen=True)
class LeaderboardRow:
    """An agent's figures in a category; each task's figure is the mean over the agent's closed
    attempts on it (leaderboard.py), and every task weighs the same."""

    agent: str
    category: str
    tasks: int  # tasks with a closed attempt (submitted, or past its deadline)
    compile_rate: float  # mean over tasks of the fraction of attempts whose candidate compiled
    correct_rate: float  # mean over tasks of the fraction of attempts that passed every case
    mean_speedup: float  # mean of the tasks' speedups (over their correct attempts); 0 when none
    geomean_speedup: float  # geometric mean of the tasks' geomean speedups over correct attempts; 0 when none
    mean_score: float  # mean over tasks of the seed's points (20 compiled + 100 correct + 100 x speedup)
    # Accounting, each a mean over the row's closed attempts: the runner's own counters over all of
    # them; what operators recorded (RecordUsage) over those that have it, None where none does.
    mean_checks: float = 0.0  # free checks used
    mean_evaluations: float = 0.0  # scored evaluations used (the final one Finalize made is not one)
    # Mean over tasks of the fraction of attempts whose submission could not be checked here
    # (NEEDS_DEVICE: compiled, no GPU on the runner's lanes): unchecked, not incorrect.
    unchecked_rate: float = 0.0
    mean_input_tokens: float | None = None
    mean_output_tokens: float | None = None
    mean_cached_tokens: float | None = None
    mean_cost_usd: float | None = None  # over the attempts whose usage states a cost
    mean_turns: float | None = None
    mean_tool_calls: float | None = None
    mean_wall_s: float | None = None
