"""The built-in agent against a scripted model endpoint on 127.0.0.1 (written here: it replays a
fixed sequence of replies, each holding a kernel version and token counts), through
`arena agent run` to a submitted attempt; and one call over each API the agent speaks."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.agents.chat import ModelError, complete
from arena.cli import main as cli
from arena.client.client import Client

KERNELS = ("speedup=2.0\n", "no file here", "speedup=3.0\n", "speedup=1.5\n")
TOKENS = {"prompt": 100, "cached": 40, "completion": 20}


class Endpoint:
    """Answers POST /v1/chat/completions and /v1/messages with REPLIES in turn; keeps every request."""

    def __init__(self, replies: tuple[str, ...]) -> None:
        self.replies = list(replies)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                text = endpoint.replies.pop(0) if endpoint.replies else "done"
                if self.path == "/v1/chat/completions":
                    answer: dict[str, Any] = {
                        "choices": [{"message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": TOKENS["prompt"], "completion_tokens": TOKENS["completion"],
                                  "prompt_tokens_details": {"cached_tokens": TOKENS["cached"]}},
                    }  # fmt: skip
                elif self.path == "/v1/messages":
                    answer = {
                        "content": [{"type": "text", "text": text}],
                        "usage": {"input_tokens": 60, "cache_read_input_tokens": 40, "output_tokens": 20},
                    }
                else:
                    self.send_error(404)
                    return
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    replies = tuple(text if "=" not in text else f'Here:\n<file path="kernel.py">\n{text}</file>\n' for text in KERNELS)
    served = Endpoint(replies)
    yield served
    served.server.shutdown()


def test_the_builtin_agent_generates_checks_evaluates_reflects_and_submits(
    kit: Any, repo: Path, make_runner: Any, serve_runner: Any, endpoint: Endpoint, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    address = serve_runner(make_runner(repo, kit.FakeEvaluate())).address
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-test-key")
    template = tmp_path / "prompt.md"
    template.write_text("Make $task_name fast.\n")
    config = {
        "name": "builtin", "adapter": "builtin", "model": "scripted-model", "endpoint": endpoint.url + "/v1",
        "flags": ["--api", "openai", "--rounds", "6"], "prompt_template": str(template),
        "api_key_env": "TEST_MODEL_KEY", "prices": {"input": 1.0, "cached": 0.5, "output": 10.0},
    }  # fmt: skip
    out = tmp_path / "out"
    argv = ["--repo-root", str(repo), "agent", "run", "--config", json.dumps(config), "--tasks", kit.SOFTMAX]
    argv += ["--runner", address, "--token", "alice-token", "--operator-token", "ops-token", "--out", str(out)]
    assert cli.main(argv) == 0
    stderr = out / ".work" / "run-1" / "triton2triton" / "softmax" / "agent.stderr.log"
    # Four replies: three kernels and one with no file; the third evaluation spends the last iteration.
    assert len(endpoint.requests) == 4, stderr.read_text()[-3000:]
    path, headers, first = endpoint.requests[0]
    assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-test-key"
    assert first["model"] == "scripted-model"
    assert "Make softmax fast." in first["messages"][1]["content"]
    assert "# Task tasks/triton2triton/softmax" in first["messages"][1]["content"]  # TASK.md
    assert kit.SECRET.decode() not in json.dumps([body for _, _, body in endpoint.requests])
    # Reflection: each later request carries what the last check or evaluation said.
    assert "evaluation: PASSED" in endpoint.requests[1][2]["messages"][-1]["content"]
    assert "No <file" in endpoint.requests[2][2]["messages"][-1]["content"]
    record = json.loads((out / "run-1" / "softmax.agent.json").read_text())
    assert (record["input_tokens"], record["cached_tokens"], record["output_tokens"], record["turns"]) == (
        400,
        160,
        80,
        4,
    )
    assert record["cost_usd"] == pytest.approx((240 * 1.0 + 160 * 0.5 + 80 * 10.0) / 1e6)
    assert record["tool_calls"] == 7  # 3 checks, 3 evaluations, 1 submit
    assert (out / "run-1" / "softmax" / "kernel.py").read_text() == "speedup=3.0\n"  # the best one
    assert "sk-test-key" not in (out / "run-1" / "softmax.transcript.jsonl").read_text()
    with Client(address, "alice-token") as agent:
        attempt = agent.get_attempt(record["attempt"])
        assert attempt.submitted and not attempt.finalized and attempt.iterations_left == 0
        assert agent.get_evaluation(attempt.final_evaluation).score.speedup == pytest.approx(3.0)


def test_the_anthropic_api_counts_cache_reads_as_input(endpoint: Endpoint) -> None:
    reply = complete("anthropic", endpoint.url, "key", "m", "system", [{"role": "user", "content": "hi"}])
    path, headers, body = endpoint.requests[0]
    assert path == "/v1/messages" and headers["x-api-key"] == "key" and headers["anthropic-version"]
    assert body["system"] == "system" and body["messages"] == [{"role": "user", "content": "hi"}]
    assert (reply.input_tokens, reply.cached_tokens, reply.output_tokens) == (100, 40, 20)
    assert 'path="kernel.py"' in reply.text


def test_an_endpoint_error_is_a_clear_model_error(endpoint: Endpoint) -> None:
    with pytest.raises(ModelError, match="answered HTTP 404"):
        complete("openai", endpoint.url + "/elsewhere", "", "m", "s", [])
