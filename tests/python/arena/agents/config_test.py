"""Agent configurations: parsing with clear errors, the digest over fields and template, prices."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from arena.agents.config import InvalidAgentConfig, config_digest, parse_config, priced, render_prompt
from arena.agents.usage import Usage

GOOD = {"name": "claude", "adapter": "claude-code", "prompt_template": "agents/prompts/mcp.md", "flags": ["--x"]}


def test_a_config_parses_with_defaults() -> None:
    config = parse_config(json.dumps(GOOD))
    assert config.flags == ("--x",) and config.budget_seconds is None and config.prices == {}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"adapter": ""}, "needs 'adapter'"),
        ({"flags": "--x"}, "'flags' must be a list"),
        ({"budget_seconds": 0}, "'budget_seconds' must be a positive integer"),
        ({"iterations": True}, "'iterations' must be a positive integer"),
        ({"prices": {"input": -1}}, "'prices' must map"),
        ({"prices": {"tokens": 1}}, "'prices' must map"),
        ({"colour": "red"}, "unknown agent configuration fields: colour"),
    ],
)
def test_a_malformed_config_is_refused(change: dict, message: str) -> None:
    with pytest.raises(InvalidAgentConfig, match=message):
        parse_config(json.dumps({**GOOD, **change}))


def test_the_digest_covers_every_field_and_the_template() -> None:
    config = parse_config(json.dumps(GOOD))
    digest = config_digest(config, "template")
    assert digest == config_digest(parse_config(json.dumps(GOOD)), "template")  # canonical: stable
    assert digest != config_digest(config, "template!")
    assert digest != config_digest(replace(config, model="other"), "template")
    assert digest != config_digest(replace(config, prices={"input": 1.0}), "template")


def test_prices_give_a_cost_only_when_the_agent_reported_none() -> None:
    usage = Usage(input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000)
    prices = {"input": 3.0, "cached": 0.3, "output": 15.0}
    assert priced(usage, prices).cost_usd == pytest.approx(0.6 * 3.0 + 0.4 * 0.3 + 0.1 * 15.0)
    assert priced(replace(usage, cost_usd=9.0), prices).cost_usd == 9.0
    assert priced(usage, {}).cost_usd is None
    assert priced(Usage(turns=3), prices).cost_usd is None  # a CLI that reported no tokens: no cost known


def test_the_prompt_fills_known_placeholders_and_leaves_others() -> None:
    text = render_prompt("$task_name in $budget_seconds s; $unknown and $$", {"task_name": "add", "budget_seconds": 60})
    assert text == "add in 60 s; $unknown and $"
