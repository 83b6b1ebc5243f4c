"""One attempt driven by a real agent CLI: a runner on loopback (the runner kit's repository and
fast evaluate), the attempt's workspace, the scripted endpoint, and the AgentRun for an adapter.
The script's shell call first tries to read the task's exemplar and wrong candidate and to list
the repository by absolute path: in its sandbox the CLI must find none of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.agents.adapter import Adapter, AgentRun
from arena.client.client import Client
from arena.evaluation.evaluation import Status
from arena.runner.records import Attempt, Usage
from arena_testing.agent_clis import mcp_command, mcp_environment
from arena_testing.scripted_endpoint import ScriptedEndpoint

TOKEN = "alice-token"
# The fast evaluate reads the speedup from the text: PASSED, 120 + 100 x 2.5 points.
KERNEL_TEXT = "def softmax(x):\n    return x.softmax(-1)  # speedup=2.5\n"
KERNEL_PATH = "candidate/kernel.py"
PROMPT = "Make the kernel in candidate/ faster. Start with the read_task tool."


@dataclass
class AgentAttempt:
    client: Client
    attempt: Attempt
    workspace: Path
    endpoint: ScriptedEndpoint
    repo: Path  # the runner's repository, which the agent must not see

    def agent_run(self, home: Path, model: str, endpoint: str) -> AgentRun:
        home.mkdir(parents=True, exist_ok=True)
        return AgentRun(
            workspace=self.workspace,
            home=home,
            prompt=PROMPT,
            model=model,
            flags=(),
            mcp_argv=mcp_command(),
            mcp_env=mcp_environment(self.client.address, TOKEN, self.attempt.id, self.workspace),
            endpoint=endpoint,
            api_key="sk-scripted",
        )


def open_agent_attempt(address: str, task: str, folder: Path, repo: Path) -> AgentAttempt:
    """Open an attempt on `task` as alice, write its workspace into folder/workspace, and start
    the endpoint (stop it and close the client when done)."""
    client = Client(address, TOKEN, timeout_s=30)
    attempt = client.open_attempt(task)
    workspace = folder / "workspace"
    client.workspace(task, workspace)
    endpoint = ScriptedEndpoint(KERNEL_PATH, KERNEL_TEXT, probe=exemplar_probe(repo)).start()
    return AgentAttempt(client, attempt, workspace, endpoint, repo)


def exemplar_probe(repo: Path) -> str:
    """A shell command reading the task's exemplar and wrong candidate (both hold SECRET) and
    listing the repository, by absolute path."""
    task = repo / "tasks" / "triton2triton" / "softmax"
    return f"cat {task}/exemplars/fast/kernel.py {task}/wrong/kernel.py; ls {repo}"


def assert_scripted_attempt(agent: AgentAttempt, adapter: Adapter, stdout: bytes, secret: bytes) -> Usage:
    """What every real CLI's scripted attempt must show: submitted, PASSED at the scripted 370
    points, one check and one iteration spent, the kernel written, the steps played in order,
    TASK.md seen and the exemplar never; the adapter's token totals equal the endpoint's.
    Returns the adapter's usage for the CLI's own counts."""
    attempt = agent.client.get_attempt(agent.attempt.id)
    assert attempt.submitted and attempt.final_evaluation, (agent.endpoint.steps, stdout.decode()[-4000:])
    evaluation = agent.client.get_evaluation(attempt.final_evaluation)
    assert evaluation.status is Status.PASSED and evaluation.score.points == pytest.approx(370.0)
    assert attempt.iterations_left == agent.attempt.iterations_left - 1 and attempt.checks_used == 1
    assert (agent.workspace / "candidate" / "kernel.py").read_text() == KERNEL_TEXT
    played = [step for step in agent.endpoint.steps if step != "side"]
    assert played == ["read_task", "write", "check", "evaluate", "submit", "final"]
    # The model saw TASK.md through the MCP tool, and never an exemplar: the probe ran (its errors
    # went back to the model) and found nothing.
    assert any("# Task tasks/triton2triton/softmax" in str(body) for body in agent.endpoint.bodies)
    assert not any(secret.decode() in str(body) for body in agent.endpoint.bodies)
    results = " ".join(str(body) for body in agent.endpoint.bodies)
    for path in ("exemplars/fast/kernel.py", "wrong/kernel.py"):
        assert f"{path}: No such file or directory" in results, results[-3000:]
    assert f"cannot access '{agent.repo}': No such file or directory" in results, results[-3000:]
    usage = adapter.usage(stdout)
    totals = agent.endpoint.totals
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (
        totals.input_tokens, totals.cached_tokens, totals.output_tokens
    )  # fmt: skip
    return usage
