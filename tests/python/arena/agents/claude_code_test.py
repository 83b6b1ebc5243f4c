"""Claude Code, the real CLI from npm, through its adapter: a scripted Anthropic endpoint drives it
to read the task, write the kernel, check, evaluate and submit on a runner on loopback. It runs in
the agent sandbox, whose Bash tool finds no exemplar (arena_testing.agent_attempt)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena.agents.adapter import AgentRun
from arena.agents.adapters.claude_code import MCP_CONFIG_FILE, ClaudeCodeAdapter
from arena_testing.agent_attempt import assert_scripted_attempt, open_agent_attempt
from arena_testing.agent_clis import install_clis, run_agent


@pytest.fixture
def clis_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = install_clis()
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return bin_dir


def test_claude_code_completes_an_attempt(
    kit: Any, repo: Path, make_runner: Any, serve_runner: Any, clis_on_path: Path, tmp_path: Path
) -> None:
    served = serve_runner(make_runner(repo, kit.FakeEvaluate()))
    agent = open_agent_attempt(served.address, kit.SOFTMAX, tmp_path, repo)
    try:
        adapter = ClaudeCodeAdapter()
        run = agent.agent_run(tmp_path / "home", "claude-scripted", agent.endpoint.root)
        done = run_agent(adapter, run, hidden=(repo,))
        assert done.returncode == 0, done.stderr.decode()[-4000:]
        usage = assert_scripted_attempt(agent, adapter, done.stdout, kit.SECRET)
        assert usage.tool_calls == 5 and usage.turns == 6 and usage.wall_s > 0
    finally:
        agent.endpoint.stop()
        agent.client.close()


def test_claude_code_launch_names_only_the_arena_server(tmp_path: Path) -> None:
    run = AgentRun(
        workspace=tmp_path / "ws", home=tmp_path / "home", prompt="Go.", model="claude-x", flags=("--max-turns", "9"),
        mcp_argv=("/usr/bin/arena", "mcp"), mcp_env={"ARENA_TOKEN": "tok", "ARENA_ATTEMPT": "a1"},
        endpoint="http://127.0.0.1:9", api_key="sk-1",
    )  # fmt: skip
    launch = ClaudeCodeAdapter().launch(run)
    config_path = tmp_path / "home" / MCP_CONFIG_FILE
    assert launch.argv == (
        "claude", "-p", "Go.", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions",
        "--mcp-config", str(config_path), "--strict-mcp-config", "--model", "claude-x", "--max-turns", "9",
    )  # fmt: skip
    assert launch.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and launch.env["ANTHROPIC_API_KEY"] == "sk-1"
    assert launch.env["HOME"] == str(tmp_path / "home") and "ARENA_TOKEN" not in launch.env
    servers = json.loads(launch.files[MCP_CONFIG_FILE])["mcpServers"]
    assert servers == {
        "arena": {"type": "stdio", "command": "/usr/bin/arena", "args": ["mcp"], "env": dict(run.mcp_env)}
    }


def test_claude_code_usage_without_a_result_event_totals_the_messages() -> None:
    """A run killed before its summary: each message counted once (Claude Code repeats a message
    per content block), cached prompt tokens inside the input, cost unknown."""
    usage = {"input_tokens": 10, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 2, "output_tokens": 3}
    blocks = [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]
    message = {"type": "assistant", "message": {"id": "m1", "content": blocks, "usage": usage}}
    other = {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text"}], "usage": usage}}
    events = "\n".join(json.dumps(event) for event in (message, message, other)).encode()
    totals = ClaudeCodeAdapter().usage(events)
    assert (totals.input_tokens, totals.cached_tokens, totals.output_tokens) == (34, 10, 6)
    assert (totals.turns, totals.tool_calls, totals.cost_usd) == (2, 1, None)


def test_claude_code_cost_is_the_reported_one_unless_it_is_a_guess() -> None:
    result: dict[str, Any] = {"type": "result", "num_turns": 2, "duration_ms": 1500, "total_cost_usd": 0.25,
              "usage": {"input_tokens": 1, "output_tokens": 2}, "modelUsage": {"claude-x": {"costBasis": "list"}}}  # fmt: skip
    adapter = ClaudeCodeAdapter()
    assert adapter.usage(json.dumps(result).encode()).cost_usd == 0.25
    guessed = {**result, "modelUsage": {"unknown-model": {"costBasis": "unknown"}}}
    assert adapter.usage(json.dumps(guessed).encode()).cost_usd is None
