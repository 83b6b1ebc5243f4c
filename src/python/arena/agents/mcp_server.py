"""`arena mcp`: the MCP server every agent adapter configures (as server `arena`), on stdio.

It speaks for one attempt: ARENA_RUNNER and ARENA_TOKEN name the runner and the agent's token,
ARENA_ATTEMPT the attempt, ARENA_WORKSPACE the workspace (default: the working directory), and
the SDK reads the client TLS variables itself. Every tool goes through the SDK (Client), so the
runner enforces every budget; the server holds no state of its own. Tools:

    read_task        TASK.md of the workspace
    check            a free check of the workspace's candidate/ files (compile, declared cases)
    evaluate         a scored evaluation of candidate/ (spends an iteration)
    get_evaluation   an evaluation by id
    submit           an evaluation id as the attempt's result (closes the attempt)
    budget           seconds, iterations and checks left, and whether the attempt is submitted

and TASK.md as the resource arena://task. Only the workspace is read: nothing here can reach a
repository, so an agent sees no exemplar through these tools.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from arena.agents.folder import workspace_candidate
from arena.candidate.candidate import Candidate
from arena.client.client import RUNNER_VARIABLE, Client
from arena.errors import ArenaError
from arena.evaluation.evaluation import Evaluation
from arena.runner.workspace import CANDIDATE_FOLDER, TASK_FILE

SERVER_NAME = "arena"  # the name in every agent's MCP configuration: Claude Code sees mcp__arena__<tool>
ATTEMPT_VARIABLE = "ARENA_ATTEMPT"
WORKSPACE_VARIABLE = "ARENA_WORKSPACE"
TASK_RESOURCE = "arena://task"
LOG_CHARS = 4000  # of each stage's log in a tool's answer: enough for a compile error, short for a model


class AttemptTools:
    """The tools' work, one method each, for one attempt in one workspace."""

    def __init__(self, client: Client, attempt: str, workspace: Path) -> None:
        if not attempt:
            raise ArenaError(f"arena mcp needs the attempt id in {ATTEMPT_VARIABLE}")
        self.client = client
        self.attempt = attempt
        self.workspace = workspace

    def read_task(self) -> str:
        path = self.workspace / TASK_FILE
        if not path.is_file():
            raise ArenaError(f"the workspace {str(self.workspace)!r} has no {TASK_FILE}")
        return path.read_text()

    def check(self) -> dict[str, Any]:
        return summarise(self.client.evaluate(self.candidate(), self.attempt, check_only=True))

    def evaluate(self) -> dict[str, Any]:
        return summarise(self.client.evaluate(self.candidate(), self.attempt))

    def get_evaluation(self, evaluation_id: str) -> dict[str, Any]:
        return summarise(self.client.get_evaluation(evaluation_id))

    def submit(self, evaluation_id: str) -> dict[str, Any]:
        attempt = self.client.submit(self.attempt, evaluation_id)
        return {"submitted": attempt.submitted, "final_evaluation": attempt.final_evaluation}

    def budget(self) -> dict[str, Any]:
        attempt = self.client.get_attempt(self.attempt)
        return {
            "seconds_left": max(0.0, round(attempt.deadline_unix_ms / 1000.0 - time.time(), 1)),
            "iterations_left": attempt.iterations_left,
            "checks_used": attempt.checks_used,
            "checks_left": attempt.checks_left,
            "submitted": attempt.submitted,
        }

    def candidate(self) -> Candidate:
        if not (self.workspace / CANDIDATE_FOLDER).is_dir():
            raise ArenaError(f"the workspace {str(self.workspace)!r} has no {CANDIDATE_FOLDER}/ folder")
        return workspace_candidate(self.workspace, self.client.get_attempt(self.attempt).task)


def summarise(evaluation: Evaluation) -> dict[str, Any]:
    """What a model needs from an evaluation: the verdict, the score, and why it failed."""
    return {
        "evaluation_id": evaluation.id,
        "status": evaluation.status.value,
        "compiled": evaluation.compiled,
        "correct": evaluation.correct,
        "points": evaluation.score.points,
        "speedup": evaluation.score.speedup,
        "cached": evaluation.cached,
        "errors": list(evaluation.errors),
        "stages": [{"name": s.name, "ok": s.ok, "log": s.log[-LOG_CHARS:]} for s in evaluation.stages],
        "cases": [
            {"name": c.name, "correct": c.correct, "timed": c.timed, "speedup": c.speedup, "error": c.error}
            for c in evaluation.cases
        ],
    }


def build_server(tools: AttemptTools) -> MCPServer:
    server = MCPServer(SERVER_NAME, instructions="Tools for one attempt at one arena task. Start with read_task.")

    @server.tool()
    def read_task() -> str:
        """TASK.md: what to optimise, the cases, tolerances, rules, budget and scoring."""
        return tools.read_task()

    @server.tool()
    def check() -> dict[str, Any]:
        """A free check of the files under candidate/: compile and the declared cases, no timing.
        Spends no iteration (checks have their own limit)."""
        return tools.check()

    @server.tool()
    def evaluate() -> dict[str, Any]:
        """A scored evaluation of the files under candidate/ (hidden cases and timing).
        Spends one iteration. Returns the evaluation id to submit."""
        return tools.evaluate()

    @server.tool()
    def get_evaluation(evaluation_id: str) -> dict[str, Any]:
        """An earlier evaluation by its id."""
        return tools.get_evaluation(evaluation_id)

    @server.tool()
    def submit(evaluation_id: str) -> dict[str, Any]:
        """Submit an evaluation of this attempt as its result. Closes the attempt."""
        return tools.submit(evaluation_id)

    @server.tool()
    def budget() -> dict[str, Any]:
        """Seconds, iterations and free checks left, and whether the attempt is submitted."""
        return tools.budget()

    @server.resource(TASK_RESOURCE, name="TASK.md", mime_type="text/markdown")
    def task_md() -> str:
        return tools.read_task()

    return server


def serve_stdio(workspace: Path | None = None) -> None:
    """Serve the attempt named by the environment on stdin/stdout until the agent closes it."""
    folder = workspace or Path(os.environ.get(WORKSPACE_VARIABLE) or os.getcwd())
    if not os.environ.get(RUNNER_VARIABLE):  # never an embedded runner: an agent has no repository
        raise ArenaError(f"arena mcp needs the runner's HOST:PORT in {RUNNER_VARIABLE}")
    with Client() as client:
        build_server(AttemptTools(client, os.environ.get(ATTEMPT_VARIABLE, ""), folder)).run("stdio")
