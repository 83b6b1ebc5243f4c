"""An agent configuration: what an `agent_config` target declares (agents/BUILD), handed to
`arena agent run --config JSON` by the Pants plugin. Its digest (sha256 over the canonical JSON of
the fields and the prompt template's content) is part of every result's provenance."""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from arena.agents.usage import Usage
from arena.errors import ArenaError

PRICE_KINDS = ("input", "output", "cached")  # USD per million tokens


class InvalidAgentConfig(ArenaError):
    """An agent configuration that is missing a field, has one of the wrong type, or names an unknown adapter."""


@dataclass(frozen=True)
class AgentConfig:
    name: str  # the target's name: attempts and leaderboard rows are filed under it
    adapter: str  # a key of arena.agents.adapters.ADAPTERS
    prompt_template: str  # path of the template, relative to the repository root
    model: str = ""  # "" = the CLI's default
    flags: tuple[str, ...] = ()  # extra command-line flags for the agent
    budget_seconds: int | None = None  # None: the task's; less than the task's ends the agent earlier
    iterations: int | None = None  # None: the task's; told to the agent (the runner's count still rules)
    endpoint: str = ""  # the model provider's base URL ("" = the CLI's default)
    api_key_env: str = ""  # the NAME of the environment variable holding the provider key
    prices: Mapping[str, float] = field(default_factory=dict)  # USD per million tokens: input, output, cached


def parse_config(text: str) -> AgentConfig:
    """The configuration from its JSON (as the plugin writes it); InvalidAgentConfig when malformed."""
    try:
        raw = json.loads(text)
    except ValueError as error:
        raise InvalidAgentConfig(f"the agent configuration is not JSON: {error}") from None
    if not isinstance(raw, dict):
        raise InvalidAgentConfig("the agent configuration must be a JSON object")
    known = set(AgentConfig.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise InvalidAgentConfig(f"unknown agent configuration fields: {', '.join(unknown)}")
    for name in ("name", "adapter", "prompt_template"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise InvalidAgentConfig(f"the agent configuration needs {name!r} (a non-empty string)")
    for name in ("model", "endpoint", "api_key_env"):
        if not isinstance(raw.get(name, ""), str):
            raise InvalidAgentConfig(f"{name!r} must be a string")
    flags = raw.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(flag, str) for flag in flags):
        raise InvalidAgentConfig("'flags' must be a list of strings")
    for name in ("budget_seconds", "iterations"):
        value = raw.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise InvalidAgentConfig(f"{name!r} must be a positive integer")
    prices = raw.get("prices") or {}
    if not isinstance(prices, dict) or not all(
        kind in PRICE_KINDS and isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        for kind, value in prices.items()
    ):
        raise InvalidAgentConfig(f"'prices' must map some of {', '.join(PRICE_KINDS)} to USD per million tokens")
    return AgentConfig(
        name=raw["name"],
        adapter=raw["adapter"],
        prompt_template=raw["prompt_template"],
        model=raw.get("model", ""),
        flags=tuple(flags),
        budget_seconds=raw.get("budget_seconds"),
        iterations=raw.get("iterations"),
        endpoint=raw.get("endpoint", ""),
        api_key_env=raw.get("api_key_env", ""),
        prices={kind: float(value) for kind, value in prices.items()},
    )


def config_json(config: AgentConfig) -> dict[str, Any]:
    """The configuration as plain JSON data (what agent.json records)."""
    data = asdict(config)
    data["flags"] = list(config.flags)
    data["prices"] = dict(config.prices)
    return data


def config_digest(config: AgentConfig, template: str) -> str:
    """sha256 over the canonical JSON of the fields and the prompt template's content."""
    canonical = json.dumps({"config": config_json(config), "prompt_template": template}, sort_keys=True,
                           separators=(",", ":"))  # fmt: skip
    return hashlib.sha256(canonical.encode()).hexdigest()


def read_template(config: AgentConfig, repo_root: Path | None) -> str:
    path = Path(config.prompt_template)
    if not path.is_absolute() and repo_root is not None:
        path = repo_root / path
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidAgentConfig(f"cannot read the prompt template {config.prompt_template}: {error}") from None


def render_prompt(template: str, values: Mapping[str, Any]) -> str:
    """$name placeholders filled from `values` (task, task_name, budget_seconds, iterations); others stay."""
    return string.Template(template).safe_substitute({key: str(value) for key, value in values.items()})


def priced(usage: Usage, prices: Mapping[str, float]) -> Usage:
    """`usage` with its cost from the price table when the agent reported none (input includes cached).
    No tokens reported is no known cost: it stays None rather than a made-up zero."""
    if usage.cost_usd is not None or not prices or not (usage.input_tokens or usage.output_tokens):
        return usage
    uncached = max(usage.input_tokens - usage.cached_tokens, 0)
    cost = (
        uncached * prices.get("input", 0.0)
        + usage.cached_tokens * prices.get("cached", prices.get("input", 0.0))
        + usage.output_tokens * prices.get("output", 0.0)
    ) / 1e6
    return replace(usage, cost_usd=round(cost, 6))
