"""Evaluations scored by the real scoring code from drawn per-call samples, so speedups, intervals
and noise floors are what the harness's statistics make of such samples."""

from __future__ import annotations

from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate, baseline_candidate
from arena.environment.environment import Environment
from arena.evaluation.evaluation import Evaluation, Status
from arena.harness.result import CaseOutcome
from arena.report.runs import AgentRecord, ResultSet, Run
from arena.report.sources import Library
from arena.scoring.score import score_case, score_evaluation
from arena.task.digest import task_digest
from arena.task.load import load_task, load_tasks
from arena.task.task import Task
from arena_testing.add_task import ADD_KERNEL, write_add_task

BASELINE_US = 100.0
SAMPLES = 60

MakeRun = Callable[..., Run]


def scored_evaluation(
    task: str, ratio: float, *, seed: int, jitter: float = 0.01, correct: bool = True, cases: Sequence[str] = ("big",)
) -> Evaluation:
    """An evaluation of `task` whose candidate is `ratio` times faster than the baseline, each side's
    per-call times drawn with a relative spread of `jitter`."""
    rng = np.random.default_rng(seed)
    results, floors = [], []
    for name in cases:
        base = rng.normal(BASELINE_US, BASELINE_US * jitter, SAMPLES)
        cand = rng.normal(BASELINE_US / ratio, BASELINE_US / ratio * jitter, SAMPLES)
        outcome = CaseOutcome(name, correct=correct, timed=correct, baseline_us=tuple(base), candidate_us=tuple(cand))
        result, floor = score_case(outcome, {})
        results.append(result)
        floors.append(floor)
    return Evaluation(
        id=f"e{seed}",
        task=task,
        task_digest="task-digest",
        candidate_digest=f"candidate-{seed}",
        status=Status.PASSED if correct else Status.INCORRECT,
        compiled=True,
        correct=correct,
        cases=tuple(results),
        score=score_evaluation(True, correct, results, floors),
        environment=Environment(fingerprint="f" * 64, backend="cuda", gpu_name="test GPU"),
        harness_version="h" * 64,
        cache_key="k" * 64,
    )


def make_run_from(evaluation: Evaluation, agent: AgentRecord | None = None, category: str = "triton2triton") -> Run:
    return Run(evaluation, category, evaluation.task, "test", agent=agent or AgentRecord())


@pytest.fixture
def make_run() -> MakeRun:
    """make_run(task, ratio, seed=..., **scored_evaluation options, agent=..., category=...) -> Run."""

    def make(task: str, ratio: float, *, agent: AgentRecord | None = None, category: str = "triton2triton",
             **options: object) -> Run:  # fmt: skip
        return make_run_from(scored_evaluation(task, ratio, **options), agent, category)  # type: ignore[arg-type]

    return make


@pytest.fixture
def scored() -> Callable[..., Evaluation]:
    """scored_evaluation, for tests that build runs themselves."""
    return scored_evaluation


@dataclass(frozen=True)
class AddRepo:
    """A checkout holding the vector-add task (arena_testing.add_task), and a score cache."""

    root: Path
    task: Task
    digest: str  # the task's digest now
    store: SqliteStore

    def library(self) -> Library:
        return Library(load_tasks(self.root), self.root, self.store)

    def evaluation(self, candidate_digest: str, ratio: float, *, seed: int, **changes: object) -> Evaluation:
        """A scored evaluation of this task's candidate `candidate_digest`."""
        scored = scored_evaluation(self.task.address, ratio, seed=seed)
        values: dict[str, Any] = {"task_digest": self.digest, "candidate_digest": candidate_digest, **changes}
        return replace(scored, **values)


@pytest.fixture
def add_repo(tmp_path: Path) -> AddRepo:
    root = write_add_task(tmp_path / "repo")
    task = load_task(root, "tasks/triton2triton/add")
    return AddRepo(root, task, task_digest(task, root), SqliteStore(tmp_path / "cache" / "scores.sqlite"))


@dataclass
class Element:
    tag: str
    attributes: dict[str, str]


class Elements(HTMLParser):
    """Every start tag with its attributes, and the page's text."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self.text: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, tag: str, **attributes: str) -> list[Element]:
        return [
            e for e in self.elements if e.tag == tag and all(e.attributes.get(k) == v for k, v in attributes.items())
        ]


@pytest.fixture
def two_sets(add_repo):  # type: ignore[no-untyped-def]
    baseline = baseline_candidate(add_repo.task, add_repo.root)
    faster = Candidate(add_repo.task.address, {"kernel.py": ADD_KERNEL.format(op="+", block=512).encode()})
    agent = AgentRecord(cost_usd=0.42, input_tokens=1000, output_tokens=200, transcript="<tool>edit kernel.py</tool>",
                        transcript_name="add.transcript.jsonl")  # fmt: skip

    def run(candidate: Candidate, ratio: float, seed: int, record: AgentRecord | None = None) -> Run:
        evaluation = add_repo.evaluation(candidate.digest, ratio, seed=seed)
        return Run(
            evaluation, "triton2triton", evaluation.task, "test", candidate=candidate, agent=record or AgentRecord()
        )

    sets = [
        ResultSet("baselines", (run(baseline, 1.0, 1),)),
        ResultSet("agent <b>x</b>", (run(faster, 2.0, 2, agent), run(faster, 2.1, 3, agent)), {"model": "m-1"}),
    ]
    return sets, add_repo.library()


@pytest.fixture
def elements() -> type[Elements]:
    """Elements(page): the page's start tags and text."""
    return Elements
