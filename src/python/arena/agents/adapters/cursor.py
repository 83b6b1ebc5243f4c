"""Cursor's agent CLI (cursor.com/install; not on npm):
`cursor-agent --print --force --trust --approve-mcps --output-format stream-json --model MODEL PROMPT`.

Headless runs need --trust (the fresh workspace is an unknown folder) and --approve-mcps (MCP
servers otherwise wait for an interactive approval). MCP servers come from HOME/.cursor/mcp.json;
the key from CURSOR_API_KEY. Cursor routes every model through its own service, so the config's
endpoint is not used. The stream (Claude-like): {"type": "system"}, "user", "assistant" messages,
"tool_call" events with subtype "started"/"completed", and a final "result"; the result carries a
"usage" object only in some versions, so tokens are read from it when present.
"""

from __future__ import annotations

import json
from typing import Any

from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.events import number, read_events
from arena.agents.usage import Usage

MCP_FILE = ".cursor/mcp.json"


class CursorAdapter:
    name = "cursor"

    def launch(self, run: AgentRun) -> Launch:
        server = {"command": run.mcp_argv[0], "args": list(run.mcp_argv[1:]), "env": dict(run.mcp_env)}
        model = ("--model", run.model) if run.model else ()
        argv = ("cursor-agent", "--print", "--force", "--trust", "--approve-mcps", "--output-format", "stream-json")
        return Launch(
            argv=(*argv, *model, *run.flags, run.prompt),
            env=scrubbed_env(run.home, {"CURSOR_API_KEY": run.api_key} if run.api_key else {}),
            files={MCP_FILE: json.dumps({"mcpServers": {"arena": server}}, indent=2)},
        )

    def usage(self, events: bytes) -> Usage:
        totals: dict[str, Any] = {}
        turns = tool_calls = 0
        wall_ms = 0
        for event in read_events(events):
            kind = event.get("type")
            turns += kind == "assistant"
            tool_calls += kind == "tool_call" and event.get("subtype") == "started"
            if kind == "result":
                wall_ms = number(event.get("duration_ms"))
                if isinstance(event.get("usage"), dict):
                    totals = event["usage"]
        cost = totals.get("total_cost_usd", totals.get("costUsd"))

        def tokens(*names: str) -> int:
            return next((number(totals[name]) for name in names if name in totals), 0)

        return Usage(
            input_tokens=tokens("input_tokens", "inputTokens"),
            output_tokens=tokens("output_tokens", "outputTokens"),
            cached_tokens=tokens("cache_read_input_tokens", "cacheReadTokens", "cached_tokens"),
            cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
            turns=turns,
            tool_calls=tool_calls,
            wall_s=wall_ms / 1000.0,
        )
