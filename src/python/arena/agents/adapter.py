"""What every agent adapter is: given one run of one agent on one task, the command to start
(argv, its whole environment, the config files to write into its private HOME), and how to total
the agent's own event stream into a Usage record. The orchestrator (arena.agents.session) does
the rest: the workspace, the process group, the deadline, finalizing and recording."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol

from arena.agents.usage import Usage


@dataclass(frozen=True)
class AgentRun:
    """What an adapter is given for one run of one agent on one task."""

    workspace: Path  # the task workspace (TASK.md, candidate/, context/): the agent's cwd
    home: Path  # a private, empty HOME for the agent (config files go here)
    prompt: str  # the rendered prompt template
    model: str
    flags: tuple[str, ...]  # extra CLI flags from the agent_config
    mcp_argv: tuple[str, ...]  # the command that starts `arena mcp` for this attempt
    # its environment: ARENA_RUNNER, ARENA_TOKEN, ARENA_ATTEMPT, ARENA_WORKSPACE (+ TLS vars)
    mcp_env: Mapping[str, str]
    endpoint: str  # the model provider's base URL ("" = the CLI's default)
    api_key: str  # the provider key the operator gave for this config ("" = none)


@dataclass(frozen=True)
class Launch:
    argv: tuple[str, ...]
    env: Mapping[str, str]  # the agent's whole environment (scrubbed: nothing of the runner's)
    files: Mapping[str, str]  # path relative to run.home -> content, written before the start
    # Folders the agent reads besides its workspace, HOME, installation and interpreter: shown
    # read-only in its sandbox (arena.agents.sandbox), e.g. the script agent's versions.
    read_only: tuple[str, ...] = ()


class Adapter(Protocol):
    name: str  # "claude-code", "codex", "gemini", "cursor", "builtin", "script"

    def launch(self, run: AgentRun) -> Launch: ...

    def usage(self, events: bytes) -> Usage: ...  # totals from the agent's stdout event stream


def scrubbed_env(home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """An agent's whole environment: PATH, a private HOME and TMPDIR, a UTF-8 locale, and `extra`.
    Nothing else of this process's environment (tokens, ARENA_TOKENS, provider keys) reaches it."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8", "TMPDIR": str(tmp)}
    env.update(extra)
    return env
