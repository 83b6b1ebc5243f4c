"""An agent's runs written as a submissions folder (docs/report.md), so `arena report
--submissions DIR` and `arena suite --submissions DIR` read them:

    DIR/agent.json                     the configuration, its digest, the run number, the sandbox
    DIR/<task name>/                   the workspace's candidate files at the end
    DIR/<task name>.agent.json         usage (tokens, cost, turns, tool calls, wall time) and the attempt
    DIR/<task name>.transcript.jsonl   the agent's event stream
A suite across categories puts each task under DIR/<category>/ (as `arena suite` reads it).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arena.agents.config import AgentConfig, config_json
from arena.agents.folder import write_folder
from arena.agents.sandbox import AgentSandbox
from arena.agents.session import AgentResult


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def isolation(sandbox: AgentSandbox | None) -> dict[str, Any]:
    """How the agent was kept from what it must not see: its sandbox, or "none" and unisolated."""
    return {"sandbox": sandbox.tool if sandbox else "none", "unisolated": sandbox is None}


def write_agent(folder: Path, config: AgentConfig, digest: str, run: int, sandbox: AgentSandbox | None) -> None:
    record = {"name": config.name, "digest": digest, "run": run, "config": config_json(config), **isolation(sandbox)}
    write_json(folder / "agent.json", record)


def write_result(
    folder: Path, result: AgentResult, digest: str, by_category: bool, sandbox: AgentSandbox | None
) -> Path:
    """Write one task's result into the run's folder; returns the candidate's folder."""
    base = folder / result.task.category if by_category else folder
    candidate = base / result.task.name
    write_folder(candidate, result.files)
    attempt = result.attempt
    record = {
        **asdict(result.usage),
        "config_digest": digest,
        "task": result.task.address,
        "attempt": attempt.id,
        "agent": attempt.agent,  # the runner's name for who ran it
        "final_evaluation": attempt.final_evaluation,
        "finalized": attempt.finalized,  # the runner chose the files, not the agent
        "killed_at_deadline": result.killed,
        "stopped_over_limit": result.stopped,  # "" or what it went over (arena.limits)
        "checks_used": attempt.checks_used,
        "iterations_left": attempt.iterations_left,
        **isolation(sandbox),
    }
    write_json(base / f"{result.task.name}.agent.json", record)
    (base / f"{result.task.name}.transcript.jsonl").write_bytes(result.events)
    return candidate
