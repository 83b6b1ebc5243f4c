"""The built-in agent (arena.agents.builtin_agent), started as a subprocess like any CLI agent.
flags: `--api openai|anthropic` (default openai), `--rounds N`. The endpoint and key travel in its
environment, the prompt in a file in its HOME."""

from __future__ import annotations

import sys

from arena.agents import builtin_agent
from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.builtin_agent import ENDPOINT_VARIABLE, KEY_VARIABLE
from arena.agents.events import number, read_events
from arena.agents.usage import Usage
from arena.errors import ArenaError

PROMPT_FILE = "prompt.md"


class BuiltinAdapter:
    name = "builtin"

    def launch(self, run: AgentRun) -> Launch:
        if not run.endpoint or not run.model:
            raise ArenaError("the builtin adapter needs an endpoint and a model in its agent_config")
        argv = (
            sys.executable, "-m", builtin_agent.__name__,
            "--model", run.model, "--prompt-file", str(run.home / PROMPT_FILE), *run.flags,
        )  # fmt: skip
        env = scrubbed_env(run.home, {**run.mcp_env, ENDPOINT_VARIABLE: run.endpoint, KEY_VARIABLE: run.api_key})
        return Launch(argv=argv, env=env, files={PROMPT_FILE: run.prompt})

    def usage(self, events: bytes) -> Usage:
        totals = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0}
        turns = tool_calls = 0
        wall_s = 0.0
        for event in read_events(events):
            if event.get("type") == "model":
                turns += 1
                for name in totals:
                    totals[name] += number(event.get(name))
            tool_calls += event.get("type") == "tool"
            if event.get("type") == "result" and isinstance(event.get("wall_s"), (int, float)):
                wall_s = float(event["wall_s"])
        # The endpoint reports no price: the cost comes from the config's prices, if any.
        return Usage(**totals, turns=turns, tool_calls=tool_calls, wall_s=wall_s)
