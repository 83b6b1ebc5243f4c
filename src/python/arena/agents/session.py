"""One run of one agent on one task, start to end: open an attempt with the agent's token, write a
fresh workspace, launch the adapter's command there (own process group, scrubbed environment, in
its sandbox: arena.agents.sandbox), kill it at the deadline plus a grace or when it goes over its
limits (arena.limits: processes, memory, disk and files), have the runner
finalize the workspace's candidate files (evaluated fresh when the agent submitted nothing), and
record the usage and the event stream."""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from arena.agents.adapter import Adapter, AgentRun, Launch
from arena.agents.config import AgentConfig, priced, render_prompt
from arena.agents.egress import Egress
from arena.agents.folder import CANDIDATE_FOLDER, read_folder
from arena.agents.process import Finished, run_agent_process
from arena.agents.sandbox import AgentSandbox, proxied
from arena.agents.usage import Usage
from arena.client.client import INSECURE_CONNECT_VARIABLE, TLS_CA_VARIABLE, Client
from arena.environment.users import Lease
from arena.errors import ArenaError
from arena.limits.limits import Lifeline, agent_limits
from arena.runner.records import Attempt, TaskView
from arena.runner.workspace import check_plain_path

GRACE_S = 10.0  # past the deadline before the agent's process group is killed
WORKSPACE = "workspace"
HOME = "home"


@dataclass(frozen=True)
class Connection:
    """How the agent reaches the runner (and the operator, who finalizes and records)."""

    address: str
    agent: Client  # with the agent's token: opens the attempt
    agent_token: str  # handed to the agent, and to nothing else
    operator: Client  # with an operator's token: finalize and record_usage


@dataclass(frozen=True)
class AgentResult:
    task: TaskView
    attempt: Attempt  # after finalizing
    usage: Usage
    events: bytes  # the agent's stdout
    files: dict[str, bytes]  # the workspace's candidate/ at the end
    killed: bool  # still running at the deadline
    stopped: str = ""  # the limit its processes went over (arena.limits), when they did


def run_agent(
    connection: Connection,
    config: AgentConfig,
    digest: str,
    adapter: Adapter,
    template: str,
    task: TaskView,
    folder: Path,
    grace_s: float = GRACE_S,
    sandbox: AgentSandbox | None = None,
) -> AgentResult:
    """Run the agent on `task` in `folder` (it gets folder/workspace and folder/home), inside
    `sandbox` (None: unisolated, as the operator allowed)."""
    attempt = connection.agent.open_attempt(task.address)
    workspace, home = folder / WORKSPACE, folder / HOME
    connection.agent.workspace(task.address, workspace)
    home.mkdir(parents=True)
    budget_s = min(config.budget_seconds or task.budget_seconds, task.budget_seconds)
    stop_at = min(attempt.deadline_unix_ms / 1000.0, time.time() + budget_s) + grace_s
    values = {
        "task": task.address, "task_name": task.name, "budget_seconds": budget_s,
        "iterations": min(config.iterations or task.iterations, task.iterations),
    }  # fmt: skip
    run = AgentRun(
        workspace=workspace,
        home=home,
        prompt=render_prompt(template, values),
        model=config.model,
        flags=config.flags,
        mcp_argv=(sys.executable, "-m", "arena.cli.main", "mcp"),
        mcp_env=agent_variables(connection, attempt.id, workspace),
        endpoint=config.endpoint,
        api_key=os.environ.get(config.api_key_env, "") if config.api_key_env else "",
    )
    launch = adapter.launch(run)
    for path, content in launch.files.items():
        check_plain_path(path)
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_text(content, encoding="utf-8")
    try:
        finished = _run_in_sandbox(launch, sandbox, connection.address, config.endpoint, folder, stop_at)
    except ArenaError:  # e.g. the CLI is not installed: close the attempt, then say so
        connection.operator.finalize(attempt.id, workspace / CANDIDATE_FOLDER)
        raise
    attempt = connection.operator.finalize(attempt.id, workspace / CANDIDATE_FOLDER)
    usage = replace(priced(adapter.usage(finished.stdout), config.prices), wall_s=round(finished.wall_s, 3))
    connection.operator.record_usage(attempt.id, usage, finished.stdout, f"{config.name}-{digest}.jsonl")
    files = read_folder(workspace / CANDIDATE_FOLDER)
    killed = finished.returncode is None and not finished.stopped
    return AgentResult(task, attempt, usage, finished.stdout, files, killed, finished.stopped)


def _run_in_sandbox(
    launch: Launch, sandbox: AgentSandbox | None, runner: str, endpoint: str, folder: Path, stop_at: float
) -> Finished:
    """The agent's process, in `sandbox` (out through its egress proxy to `runner` and the
    model's `endpoint`, as a user of its own under a root runner), until it ends or `stop_at`;
    its HOME (whose config files hold the attempt's token) removed after."""
    workspace, home = folder / WORKSPACE, folder / HOME
    egress: Egress | None = None
    held: Lease | None = None  # its user's, under a root runner: a uid no other sandbox runs as
    lifeline = Lifeline()  # its sandbox ends with this process, even while bubblewrap starts
    try:
        egress = None if sandbox is None else sandbox.egress(runner, endpoint)
        env = launch.env if egress is None else proxied(launch.env, egress)
        held = None if sandbox is None else sandbox.lease()
        user = None if held is None else held.user
        argv = launch.argv
        if sandbox is not None:
            argv = sandbox.wrap(replace(launch, env=env), workspace, home, egress, user, lifeline)
        watched = (workspace, home)  # its /tmp too: a folder of its HOME (sandbox.py)
        stderr = folder / "agent.stderr.log"
        inside = sandbox is not None
        passed = (lifeline.fd,) if inside else ()
        return run_agent_process(argv, workspace, env, stop_at, stderr, agent_limits(), watched, inside, passed)
    finally:
        lifeline.close()
        if held is not None:  # the agent's sandbox has ended (its PID namespace with it)
            held.release()
        shutil.rmtree(home, ignore_errors=True)
        if egress is not None:
            egress.close()
            if egress.refused:  # what the agent tried to reach and was not let through
                (folder / "network.log").write_text("".join(f"refused {line}\n" for line in egress.refused))


def agent_variables(connection: Connection, attempt_id: str, workspace: Path) -> dict[str, str]:
    """What the agent (and `arena mcp`) needs to reach its attempt, and the Python path to import arena."""
    variables = {
        "ARENA_RUNNER": connection.address,
        "ARENA_TOKEN": connection.agent_token,
        "ARENA_ATTEMPT": attempt_id,
        "ARENA_WORKSPACE": str(workspace),
        # Absolute: the agent runs in its workspace, and source roots may be relative (Pants' sandboxes).
        "PYTHONPATH": os.pathsep.join(os.path.abspath(path) for path in sys.path if path),
    }
    for name in (TLS_CA_VARIABLE, INSECURE_CONNECT_VARIABLE):
        if os.environ.get(name):
            variables[name] = os.environ[name]
    return variables
