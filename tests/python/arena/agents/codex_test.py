"""Codex, the real CLI from npm, through its adapter: a scripted Responses API endpoint drives it to
read the task, write the kernel, check, evaluate and submit on a runner on loopback. It runs in
the agent sandbox, with its own turned off: its shell finds no exemplar either."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import tomllib

from arena.agents.adapter import AgentRun
from arena.agents.adapters.codex import CONFIG_FILE, CodexAdapter
from arena_testing.agent_attempt import assert_scripted_attempt, open_agent_attempt
from arena_testing.agent_clis import install_clis, run_agent


def test_codex_completes_an_attempt(
    kit: Any, repo: Path, make_runner: Any, serve_runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{install_clis()}:{os.environ['PATH']}")
    served = serve_runner(make_runner(repo, kit.FakeEvaluate()))
    agent = open_agent_attempt(served.address, kit.SOFTMAX, tmp_path, repo)
    try:
        adapter = CodexAdapter()
        run = agent.agent_run(tmp_path / "home", "gpt-scripted", agent.endpoint.root + "/v1")
        done = run_agent(adapter, run, hidden=(repo,))
        assert done.returncode == 0, done.stderr.decode()[-4000:]
        usage = assert_scripted_attempt(agent, adapter, done.stdout, kit.SECRET)
        assert usage.tool_calls == 5 and usage.turns == 1 and usage.cost_usd is None
    finally:
        agent.endpoint.stop()
        agent.client.close()


def test_codex_launch_configures_the_provider_and_the_mcp_server(tmp_path: Path) -> None:
    run = AgentRun(
        workspace=tmp_path / "ws", home=tmp_path / "home", prompt="Go.", model="gpt-x", flags=("--ephemeral",),
        mcp_argv=("/usr/bin/arena", "mcp"), mcp_env={"ARENA_TOKEN": 't"ok', "ARENA_ATTEMPT": "a1"},
        endpoint="http://127.0.0.1:9/v1", api_key="sk-1",
    )  # fmt: skip
    launch = CodexAdapter().launch(run)
    assert launch.argv == (
        "codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "-m", "gpt-x", "--ephemeral", "Go.",
    )  # fmt: skip
    assert launch.env["CODEX_HOME"] == str(tmp_path / "home" / ".codex")
    assert launch.env["OPENAI_API_KEY"] == "sk-1" and "ARENA_TOKEN" not in launch.env
    config = tomllib.loads(launch.files[CONFIG_FILE])
    assert config["model"] == "gpt-x" and config["model_provider"] == "arena"
    assert config["model_providers"]["arena"]["base_url"] == "http://127.0.0.1:9/v1"
    assert config["model_providers"]["arena"]["wire_api"] == "responses"
    server = config["mcp_servers"]["arena"]
    assert (server["command"], server["args"], server["required"]) == ("/usr/bin/arena", ["mcp"], True)
    assert server["env"] == {"ARENA_TOKEN": 't"ok', "ARENA_ATTEMPT": "a1"}  # quotes survive TOML


def test_codex_usage_sums_turns_and_counts_tool_items() -> None:
    events = b"\n".join([
        b'{"type":"thread.started","thread_id":"t"}',
        b'{"type":"item.completed","item":{"id":"i0","type":"mcp_tool_call"}}',
        b'{"type":"item.completed","item":{"id":"i1","type":"command_execution"}}',
        b'{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"ok"}}',
        b'{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":30,"output_tokens":7}}',
        b'{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":3}}',
        b'{"type":"turn.comp',  # cut by a kill
    ])  # fmt: skip
    usage = CodexAdapter().usage(events)
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (150, 30, 10)
    assert (usage.turns, usage.tool_calls) == (2, 2)
