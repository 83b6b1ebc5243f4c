"""The frame of an agent process that plays its attempt itself (the built-in and script agents):
the attempt the orchestrator gave it, through ARENA_* variables, and how it ends."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arena.agents.events import emit
from arena.client.client import Client
from arena.evaluation.evaluation import Evaluation


def attempt_from_environment() -> tuple[Client, str, Path]:
    """A client of the attempt's runner (to be closed), the attempt's id and its workspace."""
    workspace = Path(os.environ.get("ARENA_WORKSPACE") or os.getcwd())
    return Client(os.environ["ARENA_RUNNER"], os.environ["ARENA_TOKEN"]), os.environ["ARENA_ATTEMPT"], workspace


def submit_best(client: Client, attempt_id: str, best: Evaluation | None, started: float) -> int:
    """Submit `best` (when there is one) and print the closing result event; the exit code."""
    if best is not None:
        client.submit(attempt_id, best.id)
        emit({"type": "tool", "name": "submit", "evaluation": best.id})
    emit({"type": "result", "submitted": best is not None, "wall_s": round(time.monotonic() - started, 3)})
    return 0
