"""Gemini CLI (npm @google/gemini-cli): `gemini -p PROMPT --output-format stream-json --yolo -m MODEL`.

MCP servers come from HOME/.gemini/settings.json "mcpServers"; the key from GEMINI_API_KEY, and
another endpoint from GOOGLE_GEMINI_BASE_URL. The stream's last event, {"type": "result",
"stats": {...}}, holds the session's totals: input_tokens (cached ones included), output_tokens,
cached, tool_calls, duration_ms (gemini-cli 0.61 StreamJsonFormatter.convertToStreamStats).
"""

from __future__ import annotations

import json

from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.events import number, read_events
from arena.agents.usage import Usage

SETTINGS_FILE = ".gemini/settings.json"


class GeminiAdapter:
    name = "gemini"

    def launch(self, run: AgentRun) -> Launch:
        server = {"command": run.mcp_argv[0], "args": list(run.mcp_argv[1:]), "env": dict(run.mcp_env), "trust": True}
        extra = {"GEMINI_API_KEY": run.api_key} if run.api_key else {}
        if run.endpoint:
            extra["GOOGLE_GEMINI_BASE_URL"] = run.endpoint
        model = ("-m", run.model) if run.model else ()
        # --skip-trust: a fresh workspace is an untrusted folder, where headless runs refuse --yolo.
        argv = ("gemini", "-p", run.prompt, "--output-format", "stream-json", "--yolo", "--skip-trust", *model)
        return Launch(
            argv=(*argv, *run.flags),
            env=scrubbed_env(run.home, extra),
            files={SETTINGS_FILE: json.dumps({"mcpServers": {"arena": server}}, indent=2)},
        )

    def usage(self, events: bytes) -> Usage:
        stats: dict = {}
        turns = tool_uses = 0
        previous = ""
        for event in read_events(events):
            kind = event.get("type")
            # An assistant message arrives as many delta chunks: a run of them is one turn.
            if kind == "message" and event.get("role") == "assistant" and previous != "assistant":
                turns += 1
            previous = "assistant" if kind == "message" and event.get("role") == "assistant" else str(kind)
            tool_uses += kind == "tool_use"
            if kind == "result" and isinstance(event.get("stats"), dict):
                stats = event["stats"]
        return Usage(
            input_tokens=number(stats.get("input_tokens")),
            output_tokens=number(stats.get("output_tokens")),
            cached_tokens=number(stats.get("cached")),
            turns=turns,
            tool_calls=number(stats.get("tool_calls")) if "tool_calls" in stats else tool_uses,
            wall_s=number(stats.get("duration_ms")) / 1000.0,
        )
