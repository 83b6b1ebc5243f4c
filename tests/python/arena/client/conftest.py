"""A one-task repository and a fast fake evaluate, for client tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.runner import Runner
from arena.scoring.records import Score
from arena.task.load import load_tasks
from arena.task.task import Task
from arena_testing.xdg import private_xdg  # noqa: F401 (autouse: default folders under tmp_path)

BUILD = """
kernel_task(
    name="softmax",
    category="triton2triton",
    description="Row-wise softmax.",
    baseline=["kernel.py"],
    entry="kernel.py:softmax",
    signature="softmax(x: [M, N] $dtype) -> [M, N] $dtype",
    reference="reference.py:softmax",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["M", "N"], "dtype": "$dtype"}],
    outputs=[{"name": "y", "shape": ["M", "N"], "dtype": "$dtype"}],
    cases=[
        {"name": "small", "dims": {"M": 7, "N": 129}, "dtype": "float32", "seed": 1},
        {"name": "big", "dims": {"M": 4096, "N": 4096}, "dtype": "float16", "seed": 2, "timed": True},
    ],
)
"""


def fake_evaluate(task: Task, candidate: Candidate, root: Path, settings: Any, store: Any) -> Evaluation:
    """PASSED with the speedup the candidate states as its whole text (b"2.5")."""
    speedup = float(candidate.files["kernel.py"])
    score = Score(points=120 + 100 * speedup, speedup=speedup, geomean_speedup=speedup)
    return Evaluation("x", task.address, "t", candidate.digest, Status.PASSED, True, True, score=score)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    task_dir = root / "tasks" / "triton2triton" / "softmax"
    task_dir.mkdir(parents=True)
    (root / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(BUILD)
    (task_dir / "kernel.py").write_text("def softmax(x):\n    return x.softmax(-1)\n")
    (task_dir / "reference.py").write_text("def softmax(x):\n    return x.softmax(-1)\n")
    return root


@pytest.fixture
def fake_runner(repo: Path, tmp_path: Path) -> Iterator[Callable[[], Runner]]:
    """fake_runner() -> a started runner with the fake evaluate (the embedding client stops it)."""

    def make() -> Runner:
        return Runner(repo, tmp_path / "state", fake_evaluate, tasks=load_tasks(repo), durable=False).start()

    yield make
