"""One model call over an OpenAI-compatible (/v1/chat/completions) or Anthropic-compatible
(/v1/messages) endpoint, with the standard library only; what the built-in agent talks through."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Sequence

from arena.agents.events import number
from arena.errors import ArenaError

APIS = ("openai", "anthropic")
ANTHROPIC_VERSION = "2023-06-01"
MAX_OUTPUT_TOKENS = 8192
TIMEOUT_S = 600.0


class ModelError(ArenaError):
    """The model endpoint refused the call or answered something that is not a reply."""


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int


def api_url(endpoint: str, path: str) -> str:
    """endpoint + path, where endpoint may or may not already end in /v1."""
    base = endpoint.rstrip("/")
    return base + (path.removeprefix("/v1") if base.endswith("/v1") else path)


def complete(
    api: str, endpoint: str, api_key: str, model: str, system: str, messages: Sequence[dict[str, str]]
) -> Reply:
    """The model's reply to `messages` ({"role": "user"|"assistant", "content": text}) after `system`."""
    if api == "openai":
        body: dict[str, Any] = {"model": model, "messages": [{"role": "system", "content": system}, *messages]}
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        answer = post(api_url(endpoint, "/v1/chat/completions"), body, headers)
        try:
            text = answer["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"the endpoint's answer holds no choices[0].message: {str(answer)[:300]}") from None
        usage = answer.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return Reply(
            str(text), number(usage.get("prompt_tokens")), number(usage.get("completion_tokens")),
            number(details.get("cached_tokens")),
        )  # fmt: skip
    if api == "anthropic":
        body = {"model": model, "max_tokens": MAX_OUTPUT_TOKENS, "system": system, "messages": list(messages)}
        headers = {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": api_key} if api_key else {})}
        answer = post(api_url(endpoint, "/v1/messages"), body, headers)
        blocks = answer.get("content")
        if not isinstance(blocks, list):
            raise ModelError(f"the endpoint's answer holds no content blocks: {str(answer)[:300]}")
        text = "".join(block.get("text", "") for block in blocks if isinstance(block, dict))
        usage = answer.get("usage") or {}
        cached = number(usage.get("cache_read_input_tokens"))
        # Anthropic counts cache reads and writes apart from input_tokens; here input includes them (as OpenAI's does).
        written = number(usage.get("cache_creation_input_tokens"))
        inputs = number(usage.get("input_tokens")) + cached + written
        return Reply(text, inputs, number(usage.get("output_tokens")), cached)
    raise ModelError(f"unknown model API {api!r}: one of {', '.join(APIS)}")


def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        detail = error.read()[:500].decode(errors="replace")
        raise ModelError(f"{url} answered HTTP {error.code}: {detail}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise ModelError(f"{url}: {error}") from None
    if not isinstance(answer, dict):
        raise ModelError(f"{url} answered something that is not a JSON object")
    return answer
