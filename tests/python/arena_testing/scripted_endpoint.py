"""A model endpoint on 127.0.0.1 that replays a fixed sequence of tool calls, so the real agent CLIs
run end to end with no model behind them.

It speaks the Anthropic Messages API (POST /v1/messages, streamed as server-sent events, as Claude
Code asks) and the OpenAI Responses API (POST /v1/responses, streamed, as Codex asks). Each reply
is chosen from the request alone: the number of tool results the conversation already holds is
the step of SCRIPT to play next, so retries and side requests cannot put it out of step. The
script: read TASK.md through the MCP tool `read_task`, write the candidate file with the CLI's
own shell tool, then the MCP tools `check`, `evaluate` and `submit` (with the id `evaluate`
returned), then a final text answer. A `probe` (a shell command) runs in the write's shell call
first: the CLI sends its output back in the next request, where a test finds what it could read.
Every reply reports fixed token counts, which the endpoint totals, so a test can compare them
with what the adapter read from the CLI's own events.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

SCRIPT = ("read_task", "write", "check", "evaluate", "submit")
SHELL_TOOLS = ("Bash", "exec_command", "shell")  # Claude Code's, then Codex's
EVALUATION_ID = re.compile(r'evaluation_id\\*"\s*:\s*\\*"([A-Za-z0-9_.:-]+)')
FINAL_TEXT = "Submitted."
NAMESPACE_SEPARATOR = "/"


@dataclass
class Totals:
    """What the endpoint reported over every reply, counted as the adapters count: input tokens
    include the cached ones."""

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    replies: int = 0


@dataclass
class ScriptedEndpoint:
    """start() serves on 127.0.0.1:0; `url` is the base URL (ending in /v1 for Codex's provider)."""

    kernel_path: str  # the file to write, relative to the agent's working directory
    kernel_text: str
    probe: str = ""  # a shell command run before the write, in the same tool call
    totals: Totals = field(default_factory=Totals)
    steps: list[str] = field(default_factory=list)  # what was played, in order
    bodies: list[dict[str, Any]] = field(default_factory=list)  # every request body
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> ScriptedEndpoint:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def usage_for(self, step: int) -> tuple[int, int, int]:
        """(fresh input, cached input, output) tokens of the reply at `step`: distinct per step."""
        return 1000 + 100 * step, 200 + step, 40 + step

    def record(self, body: dict[str, Any], step: str, tokens: tuple[int, int, int]) -> None:
        with self.lock:
            self.bodies.append(body)
            self.steps.append(step)
            self.totals.input_tokens += tokens[0] + tokens[1]
            self.totals.cached_tokens += tokens[1]
            self.totals.output_tokens += tokens[2]
            self.totals.replies += 1

    def shell_command(self) -> str:
        encoded = base64.b64encode(self.kernel_text.encode()).decode()
        write = f"echo {encoded} | base64 -d > {self.kernel_path}"
        return f"{self.probe}; {write}" if self.probe else write

    def arguments(self, action: str, tool: str, body_text: str) -> dict[str, Any]:
        if action == "write":
            command = self.shell_command()
            return {"Bash": {"command": command}, "exec_command": {"cmd": command}}.get(
                tool,
                {"command": ["bash", "-c", command]},  # Codex's older `shell` takes an argv
            )
        if action == "submit":
            found = EVALUATION_ID.findall(body_text)
            return {"evaluation_id": found[-1] if found else "missing"}
        return {}


def pick_tool(action: str, names: list[str]) -> str | None:
    """The request's tool for a step: the MCP tool whose name ends with it (mcp__arena__check), or
    the CLI's shell tool for the write."""
    if action == "write":
        return next((name for name in SHELL_TOOLS if name in names), None)
    return next((name for name in names if name.endswith(action) and "arena" in name), None)


def handler_for(endpoint: ScriptedEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (the http.server API)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw or b"{}")
            if self.path.split("?")[0].endswith("/messages"):
                self.reply(anthropic_reply(endpoint, body, raw.decode()), bool(body.get("stream")))
            elif self.path.split("?")[0].endswith("/responses"):
                self.reply(responses_reply(endpoint, body, raw.decode()), True)
            else:
                self.send_error(404)

        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)

        def reply(self, events: list[tuple[str, dict[str, Any]]], stream: bool) -> None:
            if stream:
                data = "".join(f"event: {name}\ndata: {json.dumps(event)}\n\n" for name, event in events).encode()
                kind = "text/event-stream"
            else:
                data, kind = json.dumps(collapse_anthropic(events)).encode(), "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def next_step(count_results: Callable[[], int], names: list[str]) -> tuple[str, str | None]:
    """(action, tool name); ("final", None) after the script, ("side", None) for a request that
    offers no arena tools (a title or summary the CLI asks for on the side)."""
    if pick_tool("read_task", names) is None:
        return "side", None
    done = count_results()
    if done >= len(SCRIPT):
        return "final", None
    action = SCRIPT[done]
    return action, pick_tool(action, names)


def anthropic_reply(endpoint: ScriptedEndpoint, body: dict[str, Any], text: str) -> list[tuple[str, dict[str, Any]]]:
    names = [str(tool.get("name")) for tool in body.get("tools") or ()]

    def results() -> int:
        return sum(
            1
            for message in body.get("messages") or ()
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )

    action, tool = next_step(results, names)
    index = len(endpoint.steps)
    tokens = endpoint.usage_for(index) if action != "side" else (0, 0, 0)
    endpoint.record(body, action, tokens)
    fresh, cached, output = tokens
    start_usage = {"input_tokens": fresh, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
                   "output_tokens": 1}  # fmt: skip
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_{index}", "type": "message", "role": "assistant", "model": body.get("model", ""),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}})]  # fmt: skip
    if tool is None:
        answer = FINAL_TEXT if action == "final" else "Arena task"
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": answer}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(endpoint.arguments(action, tool, text))}
        stop = "tool_use"
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": output}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


def collapse_anthropic(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The same reply as one JSON message, for a request that did not ask to stream."""
    message = dict(events[0][1]["message"])
    block = dict(events[1][1]["content_block"])
    delta = events[2][1]["delta"]
    if block["type"] == "text":
        block["text"] = delta["text"]
    else:
        block["input"] = json.loads(delta["partial_json"])
    message["content"] = [block]
    message["stop_reason"] = events[4][1]["delta"]["stop_reason"]
    message["usage"] = {**message["usage"], **events[4][1]["usage"]}
    return message


def responses_tool_names(body: dict[str, Any]) -> list[str]:
    """The request's function names; a namespace's tools (Codex groups an MCP server's tools in
    one, `mcp__arena`) as NAMESPACE/NAME."""
    names = []
    for tool in body.get("tools") or ():
        if tool.get("type") == "namespace":
            names += [
                f"{tool.get('name')}{NAMESPACE_SEPARATOR}{inner.get('name')}" for inner in tool.get("tools") or ()
            ]
        elif tool.get("name"):
            names.append(str(tool["name"]))
    return names


def responses_reply(endpoint: ScriptedEndpoint, body: dict[str, Any], text: str) -> list[tuple[str, dict[str, Any]]]:
    names = responses_tool_names(body)

    def results() -> int:
        outputs = ("function_call_output", "custom_tool_call_output")
        return sum(1 for item in body.get("input") or () if isinstance(item, dict) and item.get("type") in outputs)

    action, tool = next_step(results, names)
    index = len(endpoint.steps)
    tokens = endpoint.usage_for(index) if action != "side" else (0, 0, 0)
    endpoint.record(body, action, tokens)
    fresh, cached, output = tokens
    if tool is None:
        item: dict[str, Any] = {"type": "message", "id": f"msg_{index}", "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}  # fmt: skip
    else:
        namespace, _, name = tool.rpartition(NAMESPACE_SEPARATOR)
        item = {"type": "function_call", "id": f"fc_{index}", "call_id": f"call_{index}", "name": name,
                "arguments": json.dumps(endpoint.arguments(action, name, text)), "status": "completed"}  # fmt: skip
        if namespace:
            item["namespace"] = namespace
    response = {"id": f"resp_{index}", "object": "response", "status": "completed", "model": body.get("model", "")}
    usage = {
        "input_tokens": fresh + cached,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": fresh + cached + output,
    }
    return [
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress"}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": {**response, "output": [item], "usage": usage}}),
    ]  # fmt: skip
