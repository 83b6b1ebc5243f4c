"""The Gemini CLI, Cursor, builtin and script adapters: each one's exact argv, environment and
config files, and its usage() on sample streams written by hand from the documented formats."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.agents.adapter import AgentRun, scrubbed_env
from arena.agents.adapters import ADAPTERS
from arena.agents.adapters.builtin import BuiltinAdapter
from arena.agents.adapters.cursor import CursorAdapter
from arena.agents.adapters.gemini import GeminiAdapter
from arena.agents.adapters.script import ScriptAdapter
from arena.agents.usage import Usage
from arena.errors import ArenaError

MCP_ENV = {"ARENA_RUNNER": "127.0.0.1:1", "ARENA_TOKEN": "agent-token", "ARENA_ATTEMPT": "a1", "ARENA_WORKSPACE": "/ws"}


def agent_run(tmp_path: Path, **changes: object) -> AgentRun:
    fields: dict = dict(
        workspace=tmp_path / "ws", home=tmp_path / "home", prompt="Optimise it.", model="m-1", flags=("--x",),
        mcp_argv=("/py", "-m", "arena.cli.main", "mcp"), mcp_env=MCP_ENV, endpoint="", api_key="",
    )  # fmt: skip
    return AgentRun(**{**fields, **changes})  # type: ignore[arg-type]


def stream(*events: dict) -> bytes:
    return b"YOLO mode is enabled.\n" + b"".join(json.dumps(event).encode() + b"\n" for event in events)


def test_every_adapter_is_registered_under_its_name() -> None:
    assert sorted(ADAPTERS) == ["builtin", "claude-code", "codex", "cursor", "gemini", "script"]
    assert all(adapter.name == name for name, adapter in ADAPTERS.items())


def test_the_scrubbed_environment_holds_only_what_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TOKENS", "ops:secret:operator")
    env = scrubbed_env(tmp_path, {"ARENA_TOKEN": "t"})
    assert set(env) == {"PATH", "HOME", "LANG", "TMPDIR", "ARENA_TOKEN"}
    assert env["HOME"] == str(tmp_path) and Path(env["TMPDIR"]).is_dir() and env["LANG"] == "C.UTF-8"


def test_gemini_runs_headless_with_the_arena_mcp_server(tmp_path: Path) -> None:
    run = agent_run(tmp_path, api_key="g-key", endpoint="http://127.0.0.1:9/gemini")
    launch = GeminiAdapter().launch(run)
    assert launch.argv == (
        "gemini", "-p", "Optimise it.", "--output-format", "stream-json", "--yolo", "--skip-trust", "-m", "m-1", "--x"
    )  # fmt: skip
    assert (
        launch.env["GEMINI_API_KEY"] == "g-key" and launch.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9/gemini"
    )
    assert launch.env["HOME"] == str(run.home) and "ARENA_TOKEN" not in launch.env  # the token goes to `arena mcp`
    server = json.loads(launch.files[".gemini/settings.json"])["mcpServers"]["arena"]
    assert server == {"command": "/py", "args": ["-m", "arena.cli.main", "mcp"], "env": MCP_ENV, "trust": True}


def test_gemini_usage_is_the_result_events_totals() -> None:
    events = stream(
        {"type": "init", "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "message", "role": "user", "content": "Optimise it."},
        {"type": "message", "role": "assistant", "content": "Reading", "delta": True},
        {"type": "message", "role": "assistant", "content": " the task.", "delta": True},
        {"type": "tool_use", "tool_name": "read_task", "tool_id": "t1", "parameters": {}},
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "# Task"},
        {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
        {"type": "result", "status": "success", "stats": {"total_tokens": 1700, "input_tokens": 1500,
         "output_tokens": 200, "cached": 900, "input": 600, "duration_ms": 4200, "tool_calls": 1}},
    )  # fmt: skip
    assert GeminiAdapter().usage(events) == Usage(1500, 200, 900, None, turns=2, tool_calls=1, wall_s=4.2)


def test_gemini_flags_are_ones_the_installed_cli_knows(tmp_path: Path) -> None:
    gemini = shutil.which("gemini")
    if gemini is None:
        pytest.skip("the Gemini CLI is not on PATH (npm install -g @google/gemini-cli)")
    help_text = subprocess.run([gemini, "--help"], capture_output=True, text=True, timeout=60, env={
        "PATH": os.environ["PATH"], "HOME": str(tmp_path)}).stdout  # fmt: skip
    flags = [word for word in GeminiAdapter().launch(agent_run(tmp_path, flags=())).argv if word.startswith("-")]
    assert all(flag in help_text for flag in flags), [flag for flag in flags if flag not in help_text]


def test_cursor_runs_headless_with_the_arena_mcp_server(tmp_path: Path) -> None:
    run = agent_run(tmp_path, api_key="c-key", endpoint="ignored")
    launch = CursorAdapter().launch(run)
    assert launch.argv == (
        "cursor-agent", "--print", "--force", "--trust", "--approve-mcps", "--output-format", "stream-json",
        "--model", "m-1", "--x", "Optimise it.",
    )  # fmt: skip
    assert launch.env["CURSOR_API_KEY"] == "c-key" and set(launch.env) == {
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "CURSOR_API_KEY",
    }
    assert json.loads(launch.files[".cursor/mcp.json"])["mcpServers"]["arena"]["env"] == MCP_ENV


def test_cursor_usage_counts_turns_and_tool_calls_and_reads_usage_when_present() -> None:
    events = stream(
        {"type": "system", "subtype": "init", "session_id": "s", "model": "sonnet-4.5"},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Optimise it."}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Checking."}]}},
        {"type": "tool_call", "subtype": "started", "call_id": "c1", "tool_call": {"mcpToolCall": {"args": {}}}},
        {"type": "tool_call", "subtype": "completed", "call_id": "c1", "tool_call": {"mcpToolCall": {"result": {}}}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Submitted."}]}},
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1500,
         "usage": {"inputTokens": 800, "outputTokens": 90, "cacheReadTokens": 300}},
    )  # fmt: skip
    assert CursorAdapter().usage(events) == Usage(800, 90, 300, None, turns=2, tool_calls=1, wall_s=1.5)
    without = stream({"type": "assistant"}, {"type": "result", "subtype": "success", "duration_ms": 10})
    assert CursorAdapter().usage(without) == Usage(turns=1, wall_s=0.01)  # no tokens reported: none claimed


def test_the_builtin_agent_gets_its_key_in_the_environment_never_the_argv(tmp_path: Path) -> None:
    run = agent_run(tmp_path, endpoint="http://127.0.0.1:9/v1", api_key="sk-secret", flags=("--api", "anthropic"))
    launch = BuiltinAdapter().launch(run)
    assert "sk-secret" not in " ".join(launch.argv) and launch.argv[-2:] == ("--api", "anthropic")
    assert launch.env["ARENA_MODEL_KEY"] == "sk-secret" and launch.env["ARENA_TOKEN"] == "agent-token"
    assert launch.files == {"prompt.md": "Optimise it."}
    with pytest.raises(ArenaError, match="needs an endpoint"):
        BuiltinAdapter().launch(agent_run(tmp_path))


def test_builtin_usage_totals_the_model_events() -> None:
    events = stream(
        {"type": "model", "round": 1, "input_tokens": 100, "output_tokens": 20, "cached_tokens": 40},
        {"type": "tool", "name": "check", "status": "PASSED"},
        {"type": "model", "round": 2, "input_tokens": 150, "output_tokens": 30, "cached_tokens": 90},
        {"type": "tool", "name": "evaluate", "status": "PASSED"},
        {"type": "result", "submitted": False, "wall_s": 12.5},
    )
    assert BuiltinAdapter().usage(events) == Usage(250, 50, 130, None, turns=2, tool_calls=2, wall_s=12.5)


def test_the_script_adapter_makes_the_versions_folder_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    launch = ScriptAdapter().launch(agent_run(tmp_path, flags=("--versions", "replay")))
    assert launch.argv[1:] == ("-m", "arena.agents.script_agent", "--versions", str(tmp_path / "replay"))
    assert launch.env["ARENA_ATTEMPT"] == "a1"
    with pytest.raises(ArenaError, match="--versions"):
        ScriptAdapter().launch(agent_run(tmp_path, flags=()))
