"""Claude Code on the real pipeline (tier `child`): `arena agent run` with no runner starts one in
the process on the CPU lane, the scripted endpoint has the CLI write a known-good vector add into
candidate/, check and evaluate it in the Triton interpreter, and submit; the verdict is the CPU
lane's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arena.cli import main as cli
from arena.client.client import Client
from arena_testing.add_task import ADD_KERNEL, write_add_task
from arena_testing.agent_attempt import KERNEL_PATH
from arena_testing.agent_clis import install_clis
from arena_testing.scripted_endpoint import ScriptedEndpoint

GOOD_KERNEL = ADD_KERNEL.format(op="+", block=256)  # the baseline's algorithm with another block size


def test_claude_code_submits_what_the_cpu_lane_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{install_clis()}:{os.environ['PATH']}")
    monkeypatch.setenv("ARENA_DEVICES", "cpu")
    monkeypatch.setenv("SCRIPTED_KEY", "sk-scripted")
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    repo = write_add_task(tmp_path / "repo")
    endpoint = ScriptedEndpoint(KERNEL_PATH, GOOD_KERNEL).start()
    template = tmp_path / "prompt.md"
    template.write_text("Make $task faster. Start with the read_task tool.\n")
    config = {
        "name": "claude-code", "adapter": "claude-code", "model": "claude-scripted", "endpoint": endpoint.root,
        "api_key_env": "SCRIPTED_KEY", "prompt_template": str(template),
    }  # fmt: skip
    out = tmp_path / "out"
    argv = ["--repo-root", str(repo), "agent", "run", "--config", json.dumps(config)]
    try:
        assert cli.main([*argv, "--tasks", "tasks/triton2triton/add", "--out", str(out)]) == 0
    finally:
        endpoint.stop()
    record = json.loads((out / "run-1" / "add.agent.json").read_text())
    transcript = (out / "run-1" / "add.transcript.jsonl").read_text()
    assert not record["finalized"] and record["checks_used"] == 1, (endpoint.steps, transcript[-6000:])
    played = [step for step in endpoint.steps if step != "side"]
    assert played == ["read_task", "write", "check", "evaluate", "submit", "final"]
    with Client(repo_root=repo) as operator:  # the same runner state, opened again
        evaluation = operator.get_evaluation(record["final_evaluation"])
        (row,) = operator.leaderboard()
    # The interpreter checks every case on the CPU (no timing there): correct, compiled.
    assert evaluation.compiled and evaluation.correct, evaluation.errors
    assert evaluation.candidate_digest != "" and (out / "run-1" / "add" / "kernel.py").read_text() == GOOD_KERNEL
    assert row.agent == "claude-code" and row.tasks == 1 and row.correct_rate == 1.0
    assert row.mean_input_tokens == endpoint.totals.input_tokens
