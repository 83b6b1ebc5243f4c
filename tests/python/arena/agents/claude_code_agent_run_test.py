"""`arena agent run` with the claude-code configuration, end to end: the real Claude Code CLI, driven
by the scripted endpoint, works its attempt through `arena mcp` on a runner on loopback, and the
run becomes a submissions folder and a scored leaderboard row with the tokens the endpoint reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena.client.client import Client
from arena_testing.agent_attempt import KERNEL_PATH, KERNEL_TEXT
from arena_testing.agent_clis import install_clis
from arena_testing.scripted_endpoint import ScriptedEndpoint

PRICES = {"input": 3.0, "output": 15.0, "cached": 0.3}  # as //agents:claude-code


def test_agent_run_with_claude_code_scores_a_leaderboard_row(
    kit: Any, repo: Path, make_runner: Any, serve_runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{install_clis()}:{os.environ['PATH']}")
    monkeypatch.setenv("SCRIPTED_KEY", "sk-scripted")
    address = serve_runner(make_runner(repo, kit.FakeEvaluate())).address
    endpoint = ScriptedEndpoint(KERNEL_PATH, KERNEL_TEXT).start()
    template = tmp_path / "prompt.md"
    template.write_text("Make $task faster within $budget_seconds s. Start with the read_task tool.\n")
    config = {
        "name": "claude-code", "adapter": "claude-code", "model": "claude-scripted", "endpoint": endpoint.root,
        "api_key_env": "SCRIPTED_KEY", "prices": PRICES, "prompt_template": str(template),
    }  # fmt: skip
    out = tmp_path / "out"
    argv = ["--repo-root", str(repo), "agent", "run", "--config", json.dumps(config), "--tasks", kit.SOFTMAX]
    argv += ["--runner", address, "--token", "alice-token", "--operator-token", "ops-token", "--out", str(out)]
    try:
        assert cli.main(argv) == 0
    finally:
        endpoint.stop()
    stderr = out / ".work" / "run-1" / "triton2triton" / "softmax" / "agent.stderr.log"
    record = json.loads((out / "run-1" / "softmax.agent.json").read_text())
    assert not record["finalized"] and record["final_evaluation"], stderr.read_text()[-3000:]
    assert (out / "run-1" / "softmax" / "kernel.py").read_text() == KERNEL_TEXT
    totals = endpoint.totals
    assert (record["input_tokens"], record["cached_tokens"], record["output_tokens"]) == (
        totals.input_tokens, totals.cached_tokens, totals.output_tokens
    )  # fmt: skip
    assert record["tool_calls"] == 5 and record["turns"] == 6 and record["checks_used"] == 1
    # Claude Code only guessed a price for an unknown model: the configuration's table sets it.
    uncached = totals.input_tokens - totals.cached_tokens
    cost = (
        uncached * PRICES["input"] + totals.cached_tokens * PRICES["cached"] + totals.output_tokens * PRICES["output"]
    )
    assert record["cost_usd"] == pytest.approx(round(cost / 1e6, 6))
    with Client(address, "ops-token") as operator:
        evaluation = operator.get_evaluation(record["final_evaluation"])
        assert evaluation.score.points == pytest.approx(370.0)
        assert operator.trajectory(record["attempt"]) == (out / "run-1" / "softmax.transcript.jsonl").read_bytes()
        (row,) = (row for row in operator.leaderboard() if row.agent == "alice")
    assert row.tasks == 1 and row.mean_score == pytest.approx(370.0) and row.mean_speedup == pytest.approx(2.5)
    assert row.mean_input_tokens == totals.input_tokens and row.mean_output_tokens == totals.output_tokens
    assert row.mean_cached_tokens == totals.cached_tokens and row.mean_tool_calls == 5
    assert row.mean_cost_usd == pytest.approx(round(cost / 1e6, 6))
