"""Running an agent configuration on a suite through a runner, N times (`arena agent run`): the
connection (the given runner with the agent's and an operator's tokens, or one started in this
process with a fresh token for the agent), the tasks the suite names, and for every run and task
one arena.agents.session run, written out as a submissions folder (arena.agents.submissions).
Every agent runs in an OS sandbox (arena.agents.sandbox); where none can be made, the run is
refused unless the operator allows it unisolated, and the submissions say so."""

from __future__ import annotations

import ast
import os
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from arena.agents.adapters import ADAPTERS
from arena.agents.config import AgentConfig, InvalidAgentConfig, config_digest, parse_config, read_template
from arena.agents.sandbox import AgentSandbox, agent_sandbox
from arena.agents.session import GRACE_S, Connection, run_agent
from arena.agents.submissions import write_agent, write_result
from arena.client.client import RUNNER_VARIABLE, TOKEN_VARIABLE, Client
from arena.errors import ArenaError, Unisolated, UnknownTask
from arena.limits.limits import agent_limits
from arena.runner.auth import AGENT_NAME, Identity, new_token
from arena.runner.folders import agent_workspaces, cache_root, score_cache_folder, state_root
from arena.runner.records import TaskView

OPERATOR_TOKEN_VARIABLE = "ARENA_OPERATOR_TOKEN"  # finalizes and records; never given to the agent


@dataclass(frozen=True)
class Plan:
    """What `arena agent run` was asked to do."""

    config: str  # the configuration's JSON, or @FILE
    repo_root: Path | None
    suite: str | None = None  # a kernel_task_suite address, or a folder of tasks
    tasks: tuple[str, ...] = ()
    runs: int = 1
    out: Path | None = None  # default: <repo>/dist/agents/<name>-<digest12>
    work: Path | None = None  # workspaces; default: a new folder in $XDG_STATE_HOME/arena/workspaces/<name>-<digest12>
    allow_unisolated: bool = False  # run the agent without a sandbox where none can be made
    grace_s: float = GRACE_S
    runner: str = ""  # HOST:PORT; "" (and no ARENA_RUNNER): a runner in this process
    token: str = ""  # the agent's token for `runner` (default: ARENA_TOKEN)
    operator_token: str = ""  # an operator's token for `runner` (default: ARENA_OPERATOR_TOKEN)
    insecure_connect: bool = False


def suite_addresses(repo_root: Path | None, suite: str) -> tuple[str, tuple[str, ...]]:
    """(folder, named tasks) of a suite address: a kernel_task_suite that names its tasks gives
    them; otherwise (or a plain folder) every task below the folder is meant."""
    folder, _, name = suite.strip().removeprefix("//").partition(":")
    folder = folder.strip("/")
    build = repo_root / folder / "BUILD" if repo_root is not None else None
    if not name or build is None or not build.is_file():
        return folder, ()
    for node in ast.parse(build.read_text(encoding="utf-8")).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "kernel_task_suite":
            fields = {k.arg: k.value for k in call.keywords}
            if "name" in fields and ast.literal_eval(fields["name"]) == name:
                return folder, tuple(ast.literal_eval(fields["tasks"])) if "tasks" in fields else ()
    raise UnknownTask(f"no kernel_task_suite named {name!r} in {folder}/BUILD")


def same_task(address: str, view: TaskView) -> bool:
    folder, _, name = address.strip().removeprefix("//").partition(":")
    folder = folder.strip("/")
    return view.address == f"{folder}:{name or folder.rsplit('/', 1)[-1]}"


def select_tasks(
    views: tuple[TaskView, ...], repo_root: Path | None, suite: str | None, tasks: list[str]
) -> list[TaskView]:
    """The runner's tasks the suite and --tasks name, in address order; UnknownTask for a name it lacks."""
    wanted: list[str] = list(tasks)
    chosen = []
    if suite:
        folder, named = suite_addresses(repo_root, suite)
        wanted += named
        if not named:
            chosen = [view for view in views if view.address.startswith((f"{folder}/", f"{folder}:"))]
    for address in wanted:
        matches = [view for view in views if same_task(address, view)]
        if not matches:
            raise UnknownTask(f"the runner has no task {address!r}")
        chosen += matches
    if not chosen:
        raise UnknownTask("no tasks: give --suite ADDR or --tasks ADDR...")
    return sorted({view.address: view for view in chosen}.values(), key=lambda view: view.address)


def connect(plan: Plan, config: AgentConfig, stack: ExitStack) -> Connection:
    """Clients for the agent and the operator: on the plan's runner, or on a runner started here."""
    address = plan.runner or os.environ.get(RUNNER_VARIABLE, "")
    insecure = True if plan.insecure_connect else None
    if address:
        agent_token = plan.token or os.environ.get(TOKEN_VARIABLE, "")
        operator_token = plan.operator_token or os.environ.get(OPERATOR_TOKEN_VARIABLE, "")
        if not agent_token or not operator_token:
            raise ArenaError(
                f"--runner needs the agent's token and an operator's ({TOKEN_VARIABLE}, {OPERATOR_TOKEN_VARIABLE})"
            )
    else:
        from arena.api.embedded import start_embedded_runner  # server code, only when embedding

        if not AGENT_NAME.fullmatch(config.name):
            raise InvalidAgentConfig(f"the agent's name {config.name!r} is no runner agent name ({AGENT_NAME.pattern})")
        agent_token = new_token()
        embedded = start_embedded_runner(plan.repo_root or Path.cwd(), agents={agent_token: Identity(config.name)})
        stack.callback(embedded.stop)
        address, operator_token = embedded.address, embedded.token
    agent = stack.enter_context(Client(address, agent_token, insecure_connect=insecure))
    operator = stack.enter_context(Client(address, operator_token, insecure_connect=insecure))
    return Connection(address, agent, agent_token, operator)


def fresh_workspaces(base: Path) -> Path:
    """A new folder under `base` for this invocation's workspaces: a second run of one
    configuration must not find the first one's files (nor refuse to start over them)."""
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-"), dir=base))


def sandbox_for(plan: Plan, out: Path, work: Path) -> AgentSandbox | None:
    """The agents' sandbox, which hides the repository, the runner's state, the caches, the
    runner user's HOME, the submissions and every other workspace; None where this machine
    offers none and the operator allowed that (Unisolated otherwise)."""
    hidden = (plan.repo_root, Path.cwd(), Path.home(), state_root(), cache_root(), score_cache_folder(), out, work)
    sandbox = agent_sandbox(hidden)
    if sandbox is None and not plan.allow_unisolated:
        raise Unisolated(
            "no sandbox for the agent on this machine (bubblewrap missing, user namespaces refused, or "
            "ARENA_AGENT_SANDBOX=off): it would see the repository's exemplars, the runner's state and other "
            "workspaces. Install bubblewrap, or pass --allow-unisolated (the submissions record it)"
        )
    if sandbox is None:
        print("agent run UNISOLATED: no sandbox on this machine (--allow-unisolated)", flush=True)
    return sandbox


def load_config(text: str) -> AgentConfig:
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as error:
            raise InvalidAgentConfig(f"cannot read {text[1:]}: {error}") from None
    config = parse_config(text)
    if config.adapter not in ADAPTERS:
        raise InvalidAgentConfig(f"unknown adapter {config.adapter!r}: one of {', '.join(sorted(ADAPTERS))}")
    return config


def run_plan(plan: Plan) -> int:
    """Run it; prints a line per task and run. 0 when every run ended (whatever it scored)."""
    if plan.runs < 1:
        raise ArenaError("--runs must be at least 1")
    agent_limits()  # a malformed ARENA_AGENT_LIMITS is refused before any attempt is opened
    config = load_config(plan.config)
    template = read_template(config, plan.repo_root)
    digest = config_digest(config, template)
    out = plan.out or (plan.repo_root or Path.cwd()) / "dist" / "agents" / f"{config.name}-{digest[:12]}"
    base = plan.work or agent_workspaces() / f"{config.name}-{digest[:12]}"
    sandbox = sandbox_for(plan, out, base)  # before any folder is made: a refused run leaves none
    work = plan.work or fresh_workspaces(base)
    with ExitStack() as stack:
        connection = connect(plan, config, stack)
        tasks = select_tasks(connection.agent.list_tasks(), plan.repo_root, plan.suite, list(plan.tasks))
        by_category = len({task.category for task in tasks}) > 1
        print(f"agent {config.name} (config {digest[:12]}): {len(tasks)} task(s) x {plan.runs} run(s) -> {out}")
        for number in range(1, plan.runs + 1):
            folder = out / f"run-{number}"
            write_agent(folder, config, digest, number, sandbox)
            for task in tasks:
                scratch = work / f"run-{number}" / task.category / task.name
                adapter = ADAPTERS[config.adapter]
                result = run_agent(connection, config, digest, adapter, template, task, scratch, plan.grace_s, sandbox)
                write_result(folder, result, digest, by_category, sandbox)
                how = "finalized by the runner" if result.attempt.finalized else "submitted by the agent"
                cost = "cost not recorded" if result.usage.cost_usd is None else f"${result.usage.cost_usd:.4f}"
                print(
                    f"run {number} {task.address}: attempt {result.attempt.id}, evaluation "
                    f"{result.attempt.final_evaluation or '-'} ({how}); tokens {result.usage.input_tokens} in, "
                    f"{result.usage.output_tokens} out, {cost}{', killed at the deadline' if result.killed else ''}"
                    f"{f', stopped: it {result.stopped}' if result.stopped else ''}",
                    flush=True,
                )
    print(f"submissions: {out}/run-N (arena report --submissions {out}/run-1 ...)")
    return 0
