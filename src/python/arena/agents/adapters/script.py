"""The script agent (arena.agents.script_agent): replays prepared candidate versions, for tests
and for replaying published agent outputs. It is a subprocess like any agent, so the orchestrator
kills it at the deadline the same way. flags: `--versions DIR` (relative paths are taken from
where `arena agent run` runs: the repository root under `pants run`)."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.agents import script_agent
from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.events import read_events
from arena.agents.usage import Usage
from arena.errors import ArenaError


def absolute_versions(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The flags with --versions' folder made absolute (the agent runs in its workspace)."""
    out = list(flags)
    for index, flag in enumerate(out):
        if flag == "--versions" and index + 1 < len(out):
            out[index + 1] = str(Path(out[index + 1]).resolve())
        elif flag.startswith("--versions="):
            out[index] = "--versions=" + str(Path(flag.partition("=")[2]).resolve())
    if not any(flag == "--versions" or flag.startswith("--versions=") for flag in out):
        raise ArenaError("the script adapter needs flags=['--versions', 'DIR'] in its agent_config")
    return tuple(out)


def versions_folders(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The folders --versions names (in absolute flags): the agent reads them, so its sandbox shows them."""
    named = [flags[i + 1] for i, flag in enumerate(flags[:-1]) if flag == "--versions"]
    return (*named, *(flag.partition("=")[2] for flag in flags if flag.startswith("--versions=")))


class ScriptAdapter:
    name = "script"

    def launch(self, run: AgentRun) -> Launch:
        # The agent imports arena like `arena mcp` does: with the interpreter and path in mcp_argv/mcp_env.
        flags = absolute_versions(run.flags)
        argv = (sys.executable, "-m", script_agent.__name__, *flags)
        return Launch(argv=argv, env=scrubbed_env(run.home, run.mcp_env), files={}, read_only=versions_folders(flags))

    def usage(self, events: bytes) -> Usage:
        tool_calls = 0
        versions: set[str] = set()
        wall_s = 0.0
        for event in read_events(events):
            if event.get("type") == "tool":
                tool_calls += 1
                versions.add(str(event.get("version", "")))
            if event.get("type") == "result" and isinstance(event.get("wall_s"), (int, float)):
                wall_s = float(event["wall_s"])
        versions.discard("")
        # No model: nothing is spent on tokens, so its cost is known to be zero.
        return Usage(cost_usd=0.0, turns=len(versions), tool_calls=tool_calls, wall_s=wall_s)
