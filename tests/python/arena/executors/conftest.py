"""A one-task repository (y = 2 * x in Triton, checked by the interpreter on CPU) for the executors."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Iterator

import pytest

from arena.candidate.candidate import Candidate
from arena.task.load import load_task
from arena.task.task import Task
from arena_testing.buildgrid_server import buildgrid_server
from arena_testing.scale_task import SCALE_ADDRESS, WRONG_KERNEL, write_scale_repo


@pytest.fixture
def scale_repo(tmp_path: Path) -> Path:
    return write_scale_repo(tmp_path / "repo")


@pytest.fixture
def scale_task(scale_repo: Path) -> Task:
    return load_task(scale_repo, SCALE_ADDRESS)


@pytest.fixture
def wrong_candidate() -> Candidate:
    """Triples instead of doubling: compiles, runs, incorrect."""
    return Candidate(SCALE_ADDRESS, {"kernel.py": WRONG_KERNEL.encode()})


@pytest.fixture
def buildgrid(tmp_path: Path) -> Iterator[str]:
    """host:port of a BuildGrid server on 127.0.0.1 (instance `arena`); skipped without buildgrid."""
    if importlib.util.find_spec("buildgrid") is None:
        pytest.skip("the optional `buildgrid` package (REAPI messages and a server) is not installed")
    with buildgrid_server(tmp_path) as endpoint:
        yield endpoint
