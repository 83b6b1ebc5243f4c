"""`arena mcp`'s tools, through the MCP SDK's own client, on a runner on loopback: each goes
through the SDK to the runner, which keeps every budget; none can reach the repository."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client as McpClient
from mcp.types import TextResourceContents

from arena.agents.mcp_server import AttemptTools, build_server, serve_stdio
from arena.client.client import Client
from arena.errors import ArenaError

TOOLS = ["budget", "check", "evaluate", "get_evaluation", "read_task", "submit"]


def answer(result: Any) -> Any:
    """A tool's answer: its structured result, else its text."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return result.content[0].text


def test_tools_play_an_attempt(kit: Any, repo: Path, make_runner: Any, serve_runner: Any, tmp_path: Path) -> None:
    served = serve_runner(make_runner(repo, kit.FakeEvaluate(), max_checks=4))  # not the default limit
    with Client(served.address, "alice-token") as client:
        attempt = client.open_attempt(kit.SOFTMAX)
        workspace = tmp_path / "workspace"
        client.workspace(kit.SOFTMAX, workspace)
        (workspace / "candidate" / "kernel.py").write_text("def softmax(x):\n    return x  # speedup=2.0\n")
        server = build_server(AttemptTools(client, attempt.id, workspace))
        seen: dict[str, Any] = {}

        async def play() -> None:
            async with McpClient(server) as mcp:
                seen["tools"] = sorted(tool.name for tool in (await mcp.list_tools()).tools)
                seen["task"] = answer(await mcp.call_tool("read_task", {}))
                resource = await mcp.read_resource("arena://task")
                assert isinstance(resource.contents[0], TextResourceContents)
                seen["resource"] = resource.contents[0].text
                seen["check"] = answer(await mcp.call_tool("check", {}))
                seen["after_check"] = answer(await mcp.call_tool("budget", {}))
                seen["evaluate"] = answer(await mcp.call_tool("evaluate", {}))
                evaluation = seen["evaluate"]["evaluation_id"]
                seen["get"] = answer(await mcp.call_tool("get_evaluation", {"evaluation_id": evaluation}))
                seen["submit"] = answer(await mcp.call_tool("submit", {"evaluation_id": evaluation}))
                seen["after_submit"] = answer(await mcp.call_tool("budget", {}))
                (workspace / "candidate" / "kernel.py").write_text("def softmax(x):\n    return x  # speedup=3.0\n")
                seen["refused"] = await mcp.call_tool("evaluate", {})

        asyncio.run(play())
    task_md = (workspace / "TASK.md").read_text()
    assert seen["tools"] == TOOLS
    assert seen["task"] == task_md == seen["resource"]
    assert seen["check"]["status"] == "PASSED"
    assert seen["after_check"]["iterations_left"] == attempt.iterations_left  # a check is free
    assert seen["after_check"]["checks_used"] == 1 and not seen["after_check"]["submitted"]
    assert seen["after_check"]["checks_left"] == 3  # the runner's --max-checks (4) less the one spent
    assert 0 < seen["after_check"]["seconds_left"] <= 3600
    assert seen["evaluate"]["status"] == "PASSED" and seen["evaluate"]["points"] == pytest.approx(320.0)
    assert seen["get"]["evaluation_id"] == seen["evaluate"]["evaluation_id"]
    assert seen["submit"] == {"submitted": True, "final_evaluation": seen["evaluate"]["evaluation_id"]}
    assert seen["after_submit"]["iterations_left"] == attempt.iterations_left - 1
    assert seen["after_submit"]["submitted"]
    assert seen["refused"].is_error  # the runner refuses a new evaluation in a submitted attempt
    # The candidate sent was the workspace's file, and nothing any tool said holds an exemplar.
    assert json.dumps(seen, default=str).count(kit.SECRET.decode()) == 0


def test_no_tool_reaches_the_exemplars(
    kit: Any, repo: Path, make_runner: Any, serve_runner: Any, tmp_path: Path
) -> None:
    """The workspace holds no exemplar (nor the wrong candidate), and what the tools read and send
    comes from the workspace only, never from the repository that holds them."""
    served = serve_runner(make_runner(repo, kit.FakeEvaluate()))
    with Client(served.address, "alice-token") as client:
        attempt = client.open_attempt(kit.SOFTMAX)
        workspace = tmp_path / "workspace"
        client.workspace(kit.SOFTMAX, workspace)
        for path in workspace.rglob("*"):
            assert not path.is_file() or kit.SECRET not in path.read_bytes(), path
        assert not any("exemplar" in str(path.relative_to(workspace)) for path in workspace.rglob("*"))
        tools = AttemptTools(client, attempt.id, workspace)
        assert kit.SECRET.decode() not in tools.read_task()
        assert kit.SECRET not in b"".join(tools.candidate().files.values())


def test_stdio_server_needs_a_runner_and_an_attempt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    with pytest.raises(ArenaError, match="ARENA_RUNNER"):
        serve_stdio(tmp_path)  # never an embedded runner, which would read a repository
    with pytest.raises(ArenaError, match="ARENA_ATTEMPT"):
        AttemptTools(Client("127.0.0.1:1", "t"), "", tmp_path)
