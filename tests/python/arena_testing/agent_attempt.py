"""One attempt driven by a real agent CLI: a runner on loopback (the runner kit's repository and
fast evaluate), the attempt's workspace, the scripted endpoint, and the AgentRun for an adapter."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.agents.adapter import AgentRun
from arena.client.client import Client
from arena.runner.records import Attempt
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


def open_agent_attempt(address: str, task: str, folder: Path) -> AgentAttempt:
    """Open an attempt on `task` as alice, write its workspace into folder/workspace, and start
    the endpoint (stop it and close the client when done)."""
    client = Client(address, TOKEN, timeout_s=30)
    attempt = client.open_attempt(task)
    workspace = folder / "workspace"
    client.workspace(task, workspace)
    endpoint = ScriptedEndpoint(KERNEL_PATH, KERNEL_TEXT).start()
    return AgentAttempt(client, attempt, workspace, endpoint)
