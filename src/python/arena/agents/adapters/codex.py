"""Codex CLI (npm @openai/codex): `codex exec --json --skip-git-repo-check
--dangerously-bypass-approvals-and-sandbox -m MODEL PROMPT`.

Its configuration is HOME/.codex/config.toml (CODEX_HOME is set to that folder): the `arena` MCP
server with its environment (Codex passes an MCP server only the variables named there), and,
when the configuration names an endpoint, a model provider `arena` speaking the Responses API at
that base URL with the key in OPENAI_API_KEY. The --json stream (codex-cli 0.171) has an
item.completed event per tool call (types mcp_tool_call, command_execution, file_change,
web_search) and a turn.completed event per turn of `exec` with that turn's usage: input_tokens
(cached ones included), cached_input_tokens, output_tokens. Codex does not report cost or model
calls: turns are its turns (one per `exec`), and cost is left to the price table.
"""

from __future__ import annotations

import json

from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.events import number, read_events
from arena.agents.usage import Usage

CODEX_FOLDER = ".codex"
CONFIG_FILE = f"{CODEX_FOLDER}/config.toml"
PROVIDER = "arena"
KEY_VARIABLE = "OPENAI_API_KEY"
TOOL_TIMEOUT_S = 3600  # an evaluation waits in the runner's queue: never cut a tool call short
STARTUP_TIMEOUT_S = 120  # `arena mcp` imports the SDK and gRPC before it answers
TOOL_ITEMS = ("mcp_tool_call", "command_execution", "file_change", "web_search")


class CodexAdapter:
    name = "codex"

    def launch(self, run: AgentRun) -> Launch:
        extra = {"CODEX_HOME": str(run.home / CODEX_FOLDER)}
        if run.api_key:
            extra[KEY_VARIABLE] = extra["CODEX_API_KEY"] = run.api_key
        model = ("-m", run.model) if run.model else ()
        argv = (
            "codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *model,
        )  # fmt: skip
        return Launch(
            argv=(*argv, *run.flags, run.prompt),
            env=scrubbed_env(run.home, extra),
            files={CONFIG_FILE: config_toml(run)},
        )

    def usage(self, events: bytes) -> Usage:
        input_tokens = cached = output = turns = tool_calls = 0
        for event in read_events(events):
            kind = event.get("type")
            item = event.get("item")
            if kind == "item.completed" and isinstance(item, dict) and item.get("type") in TOOL_ITEMS:
                tool_calls += 1
            usage = event.get("usage")
            if kind == "turn.completed" and isinstance(usage, dict):
                turns += 1
                input_tokens += number(usage.get("input_tokens"))
                cached += number(usage.get("cached_input_tokens"))
                output += number(usage.get("output_tokens"))
        return Usage(
            input_tokens=input_tokens, output_tokens=output, cached_tokens=cached, turns=turns, tool_calls=tool_calls
        )


def config_toml(run: AgentRun) -> str:
    lines = []
    if run.model:
        lines.append(f"model = {toml_string(run.model)}")
    if run.endpoint:
        lines += [
            f"model_provider = {toml_string(PROVIDER)}",
            "",
            f"[model_providers.{PROVIDER}]",
            f"name = {toml_string(PROVIDER)}",
            f"base_url = {toml_string(run.endpoint)}",
            f"env_key = {toml_string(KEY_VARIABLE)}",
            'wire_api = "responses"',
        ]
    lines += [
        "",
        "[mcp_servers.arena]",
        f"command = {toml_string(run.mcp_argv[0])}",
        "args = [" + ", ".join(toml_string(arg) for arg in run.mcp_argv[1:]) + "]",
        # Required: Codex then waits for the server before its first model call (else the first
        # turn may go out without the arena's tools) and fails when it cannot start.
        "required = true",
        f"startup_timeout_sec = {STARTUP_TIMEOUT_S}",
        f"tool_timeout_sec = {TOOL_TIMEOUT_S}",
        "",
        "[mcp_servers.arena.env]",
        *(f"{toml_string(name)} = {toml_string(value)}" for name, value in sorted(run.mcp_env.items())),
    ]
    return "\n".join(lines) + "\n"


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes (\\", \\\\, \\n, \\uXXXX) are TOML's too."""
    return json.dumps(text)
