"""Claude Code (npm @anthropic-ai/claude-code): `claude -p PROMPT --output-format stream-json --verbose
--permission-mode bypassPermissions --mcp-config FILE --strict-mcp-config --model MODEL`.

The MCP configuration is a file in the agent's HOME naming only the `arena` server (so the agent
sees mcp__arena__<tool>, and --strict-mcp-config ignores every other server). The endpoint comes
from ANTHROPIC_BASE_URL, the key from ANTHROPIC_API_KEY. The stream's last event,
{"type": "result", ...}, holds the session's totals (claude-code 2.1): `usage` (input_tokens
without cache reads or writes, cache_creation_input_tokens, cache_read_input_tokens,
output_tokens), total_cost_usd, num_turns and duration_ms. A run killed before that event is
totalled from its assistant messages instead.
"""

from __future__ import annotations

import json
import os
from typing import Any

from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.events import number, read_events
from arena.agents.usage import Usage

MCP_CONFIG_FILE = ".arena/claude-mcp.json"
TOOL_TIMEOUT_MS = 3_600_000  # an evaluation waits in the runner's queue: never cut a tool call short
STARTUP_TIMEOUT_MS = 120_000  # `arena mcp` imports the SDK and gRPC before it answers


class ClaudeCodeAdapter:
    name = "claude-code"

    def launch(self, run: AgentRun) -> Launch:
        server = {"type": "stdio", "command": run.mcp_argv[0], "args": list(run.mcp_argv[1:]), "env": dict(run.mcp_env)}
        extra = {
            "MCP_TOOL_TIMEOUT": str(TOOL_TIMEOUT_MS),
            "MCP_TIMEOUT": str(STARTUP_TIMEOUT_MS),
            # No auto-update, telemetry or other traffic beside the model endpoint.
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            # The arena's six tools in the model's view from the first turn, not deferred behind a
            # tool search the agent would spend turns on.
            "ENABLE_TOOL_SEARCH": "false",
        }
        if run.endpoint:
            extra["ANTHROPIC_BASE_URL"] = run.endpoint
        if run.api_key:
            extra["ANTHROPIC_API_KEY"] = run.api_key
        if os.geteuid() == 0:
            # As root, Claude Code refuses bypassPermissions unless told it runs in a sandbox; the
            # agent's only reach is its workspace, its private HOME and the MCP tools.
            extra["IS_SANDBOX"] = "1"
        model = ("--model", run.model) if run.model else ()
        argv = (
            "claude", "-p", run.prompt, "--output-format", "stream-json", "--verbose",
            "--permission-mode", "bypassPermissions",
            "--mcp-config", str(run.home / MCP_CONFIG_FILE), "--strict-mcp-config", *model,
        )  # fmt: skip
        return Launch(
            argv=(*argv, *run.flags),
            env=scrubbed_env(run.home, extra),
            files={MCP_CONFIG_FILE: json.dumps({"mcpServers": {"arena": server}}, indent=2)},
        )

    def usage(self, events: bytes) -> Usage:
        messages: dict[str, dict[str, Any]] = {}  # assistant message id -> its usage (repeated per block)
        tool_uses: set[str] = set()
        result: dict[str, Any] | None = None
        for event in read_events(events):
            if event.get("type") == "result":
                result = event
            message = event.get("message")
            if event.get("type") != "assistant" or not isinstance(message, dict):
                continue
            messages[str(message.get("id", len(messages)))] = message.get("usage") or {}
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tool_uses.add(str(block.get("id", len(tool_uses))))
        if result is None:  # killed before its summary: total what the messages said
            totals = {key: sum(number(usage.get(key)) for usage in messages.values()) for key in TOKEN_KEYS}
            return usage_from(totals, cost=None, turns=len(messages), tool_calls=len(tool_uses), wall_s=0.0)
        return usage_from(
            result.get("usage") or {},
            cost=reported_cost(result),
            turns=number(result.get("num_turns")),
            tool_calls=len(tool_uses),
            wall_s=number(result.get("duration_ms")) / 1000.0,
        )


TOKEN_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def usage_from(tokens: dict[str, Any], cost: float | None, turns: int, tool_calls: int, wall_s: float) -> Usage:
    """Our input_tokens count every prompt token (cached ones included), as the other adapters do;
    Anthropic's count only those neither read from nor written to the cache."""
    cached = number(tokens.get("cache_read_input_tokens"))
    fresh = number(tokens.get("input_tokens")) + number(tokens.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=fresh + cached,
        output_tokens=number(tokens.get("output_tokens")),
        cached_tokens=cached,
        cost_usd=cost,
        turns=turns,
        tool_calls=tool_calls,
        wall_s=wall_s,
    )


def reported_cost(result: dict[str, Any]) -> float | None:
    """total_cost_usd, unless Claude Code priced no model it used (costBasis "unknown": a model it
    has no prices for, whose cost it only guesses); then the configuration's price table decides."""
    cost = result.get("total_cost_usd")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        return None
    models = result.get("modelUsage")
    if isinstance(models, dict) and models:
        bases = {model.get("costBasis") if isinstance(model, dict) else None for model in models.values()}
        if bases == {"unknown"}:
            return None
    return float(cost)
