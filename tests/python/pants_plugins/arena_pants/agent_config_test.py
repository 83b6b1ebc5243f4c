"""agent_config on tiny BUILD files, through Pants' in-process engine: its fields' checks, and the
JSON `pants run` hands to `arena agent run --config`."""

from __future__ import annotations

import json

import pytest
from pants.engine.addresses import Address
from pants.engine.target import InvalidTargetException
from pants.testutil.rule_runner import RuleRunner, engine_error

from arena_pants.rules import AgentConfigFieldSet, agent_config_json
from arena_pants.target_types import AgentConfigTarget

ADDRESS = Address("agents", target_name="claude")
PROMPT = {"agents/prompts/mcp.md": "Optimise $task.\n"}


@pytest.fixture
def rule_runner() -> RuleRunner:
    return RuleRunner(target_types=[AgentConfigTarget], isolated_local_store=True)


def agent_config(**fields: str) -> str:
    given = {"name": '"claude"', "adapter": '"claude-code"', "prompt_template": '"prompts/mcp.md"', **fields}
    return "agent_config(\n" + "".join(f"    {key}={value},\n" for key, value in given.items()) + ")\n"


def test_the_fields_become_the_config_json(rule_runner: RuleRunner) -> None:
    build = agent_config(
        model='"claude-sonnet-4-5"', flags='["--verbose"]', budget_seconds="600", iterations="2",
        endpoint='"http://127.0.0.1:8080"', api_key_env='"ANTHROPIC_API_KEY"', prices='{"input": 3, "output": 15.0}',
    )  # fmt: skip
    rule_runner.write_files({"agents/BUILD": build, **PROMPT})
    config = json.loads(agent_config_json(AgentConfigFieldSet.create(rule_runner.get_target(ADDRESS))))
    assert config == {
        "name": "claude", "adapter": "claude-code", "model": "claude-sonnet-4-5", "flags": ["--verbose"],
        "budget_seconds": 600, "iterations": 2, "prompt_template": "agents/prompts/mcp.md",
        "endpoint": "http://127.0.0.1:8080", "api_key_env": "ANTHROPIC_API_KEY", "prices": {"input": 3, "output": 15.0},
    }  # fmt: skip


def test_left_out_fields_take_their_defaults(rule_runner: RuleRunner) -> None:
    rule_runner.write_files({"agents/BUILD": agent_config(), **PROMPT})
    config = json.loads(agent_config_json(AgentConfigFieldSet.create(rule_runner.get_target(ADDRESS))))
    assert (config["model"], config["flags"], config["budget_seconds"], config["iterations"]) == ("", [], None, None)
    assert (config["api_key_env"], config["prices"]) == ("", {})


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"adapter": '"vim"'}, "must be one of ['builtin', 'claude-code', 'codex', 'cursor', 'gemini', 'script']"),
        ({"budget_seconds": "0"}, "'budget_seconds' field in target agents:claude must be greater than zero"),
        ({"iterations": "True"}, "'iterations' field in target agents:claude must be an integer"),
        ({"api_key_env": '"sk-ant-api03-abc"'}, "must name an environment variable"),
        ({"prices": '{"tokens": 1}'}, "maps input, output, cached to prices of at least 0"),
        ({"prices": '{"input": -1}'}, "maps input, output, cached to prices of at least 0"),
        ({"prices": "[1, 2]"}, "must be a dict"),
    ],
)
def test_a_bad_field_fails(rule_runner: RuleRunner, fields: dict[str, str], message: str) -> None:
    rule_runner.write_files({"agents/BUILD": agent_config(**fields), **PROMPT})
    with engine_error(InvalidTargetException, contains=message):
        rule_runner.get_target(ADDRESS)


def test_the_adapter_and_the_template_are_required(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {"agents/BUILD": 'agent_config(name="claude", prompt_template="prompts/mcp.md")\n', **PROMPT}
    )
    with engine_error(InvalidTargetException, contains="The 'adapter' field in target agents:claude must be defined"):
        rule_runner.get_target(ADDRESS)
    rule_runner.write_files({"agents/BUILD": 'agent_config(name="claude", adapter="codex")\n'})
    with engine_error(InvalidTargetException, contains="The 'prompt_template' field in target agents:claude must be"):
        rule_runner.get_target(ADDRESS)
