"""`arena agent run` end to end against a runner on loopback (the fast fake evaluation): the
script agent's runs become a submissions folder and a leaderboard row with usage; an agent still
running at the deadline is killed with its whole process group and its files are finalized; the
agent's environment holds its attempt token and nothing else of the runner's; the workspace
holds no exemplar. Each agent runs in its sandbox (sandbox_test.py plants what it must not see)."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.agents import process
from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.adapters import ADAPTERS
from arena.agents.egress import Egress
from arena.agents.sandbox import proxied, sandbox_tool
from arena.agents.usage import Usage
from arena.candidate.candidate import digest_files
from arena.cli import main as cli
from arena.client.client import Client
from arena.errors import UnknownTask
from arena.limits.limits import AGENT_VARIABLE
from arena_testing.waiting import wait_until

TASK_NAME = "softmax"


def config(tmp_path: Path, adapter: str, **fields: Any) -> str:
    template = tmp_path / "prompt.md"
    template.write_text("Optimise $task in $budget_seconds s with $iterations evaluations.\n")
    return json.dumps({"name": "tester", "adapter": adapter, "prompt_template": str(template), **fields})


def agent_run(repo: Path, address: str, out: Path, config_json: str, *extra: str) -> int:
    argv = ["--repo-root", str(repo), "agent", "run", "--config", config_json, "--tasks", "tasks/triton2triton/softmax"]
    argv += ["--runner", address, "--token", "alice-token", "--operator-token", "ops-token", "--out", str(out)]
    argv += ["--work", str(out / ".work")]  # the workspaces beside the submissions (default: XDG state)
    if not sandbox_tool():  # a machine without bubblewrap runs them too, as the operator may allow
        argv.append("--allow-unisolated")
    return cli.main([*argv, *extra])


def write_versions(root: Path, texts: list[str]) -> Path:
    for number, text in enumerate(texts, start=1):
        (root / TASK_NAME / f"v{number}").mkdir(parents=True)
        (root / TASK_NAME / f"v{number}" / "kernel.py").write_text(text)
    return root


@pytest.fixture
def address(kit: Any, repo: Path, make_runner: Any, serve_runner: Any) -> str:
    return str(serve_runner(make_runner(repo, kit.FakeEvaluate())).address)


def test_the_script_agent_runs_become_submissions_and_a_leaderboard_row(
    kit: Any, repo: Path, address: str, tmp_path: Path
) -> None:
    versions = write_versions(tmp_path / "replay", ["broken\n", "speedup=1.5\n", "speedup=3.0\n"])
    out = tmp_path / "out"
    assert (
        agent_run(repo, address, out, config(tmp_path, "script", flags=["--versions", str(versions)]), "--runs", "2")
        == 0
    )
    for run in ("run-1", "run-2"):
        folder = out / run
        agent = json.loads((folder / "agent.json").read_text())
        assert agent["name"] == "tester" and len(agent["digest"]) == 64 and agent["config"]["adapter"] == "script"
        # The best version (most points) was submitted by the agent, and its files are the candidate.
        stderr = out / ".work" / run / "triton2triton" / TASK_NAME / "agent.stderr.log"
        assert (folder / TASK_NAME / "kernel.py").read_text() == "speedup=3.0\n", stderr.read_text()[-3000:]
        record = json.loads((folder / f"{TASK_NAME}.agent.json").read_text())
        assert record["config_digest"] == agent["digest"] and not record["finalized"] and record["agent"] == "alice"
        # Three checks, two evaluations (the broken version does not compile), one submit.
        assert record["tool_calls"] == 6 and record["turns"] == 3 and record["cost_usd"] == 0.0
        events = (folder / f"{TASK_NAME}.transcript.jsonl").read_bytes()
        steps = [json.loads(line).get("name", json.loads(line)["type"]) for line in events.splitlines()]
        assert steps == ["check", "check", "evaluate", "check", "evaluate", "submit", "result"]
    with Client(address, "alice-token") as agent, Client(address, "ops-token") as operator:
        attempt = agent.get_attempt(record["attempt"])
        assert attempt.submitted and attempt.final_evaluation == record["final_evaluation"]
        assert operator.get_evaluation(attempt.final_evaluation).score.speedup == pytest.approx(3.0)
        assert operator.trajectory(attempt.id) == events
        (row,) = (row for row in operator.leaderboard() if row.agent == "alice")
    assert row.tasks == 1 and row.mean_tool_calls == pytest.approx(6.0) and row.mean_cost_usd == 0.0
    assert row.mean_checks == pytest.approx(3.0) and row.mean_evaluations == pytest.approx(2.0)


@dataclass(frozen=True)
class CommandAdapter:
    """A stand-in agent: any command, in the scrubbed environment every adapter gives."""

    name: str
    argv: tuple[str, ...]

    def launch(self, run: AgentRun) -> Launch:
        return Launch(self.argv, scrubbed_env(run.home, run.mcp_env), {"settings.json": "{}"})

    def usage(self, events: bytes) -> Usage:
        return Usage(turns=len(events.splitlines()))


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie (its state in /proc is Z)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def living(argv: tuple[str, ...]) -> list[int]:
    """The pids, as this process sees them, of the living processes whose command line is `argv`:
    an agent's children found from outside its sandbox, whose PID namespace numbers them apart."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and (entry / "cmdline").read_bytes() == wanted
                and not process_gone(int(entry.name))
            ):
                found.append(int(entry.name))
        except OSError:
            pass  # gone meanwhile
    return found


class ClockAfterEdits:
    """arena.agents.process's clock, whose time() (read once, to wait for the deadline) comes only
    once the agent wrote `done`: the deadline cannot pass before the agent made its edits, however
    slowly a busy machine starts it."""

    monotonic = staticmethod(time.monotonic)

    def __init__(self, done: Path) -> None:
        self.done = done

    def time(self) -> float:
        wait_until(lambda: self.done.is_file() and self.done.read_text().endswith("\n"), "the agent's edits")
        return time.time()


class ClockSeeingTheChild(ClockAfterEdits):
    """The same, noting then which living processes run `argv` (the agent's child, alive then)."""

    def __init__(self, done: Path, argv: tuple[str, ...]) -> None:
        super().__init__(done)
        self.argv, self.seen = argv, list[int]()

    def time(self) -> float:
        now = super().time()
        # The pid file can be written between the shell's fork and its child's exec of `argv`.
        wait_until(lambda: bool(living(self.argv)), "the agent's child to run its command")
        self.seen = living(self.argv)
        return now


def test_an_agent_running_at_the_deadline_is_killed_and_its_files_finalized(
    repo: Path, address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It edits the kernel, starts a child that would outlive it, says so, and sleeps past any deadline.
    # The child's command line is its own, to find it from outside the sandbox's PID namespace.
    child = ("sleep", f"600.{random.randrange(10**6):06d}")
    script = f"echo speedup=4.0 > candidate/kernel.py; {' '.join(child)} & echo '{{\"t\": 1}}'; echo $! > child.pid; sleep 600"
    monkeypatch.setitem(ADAPTERS, "hang", CommandAdapter("hang", ("sh", "-c", script)))
    out = tmp_path / "out"
    work = out / ".work" / "run-1" / "triton2triton" / TASK_NAME / "workspace"
    clock = ClockSeeingTheChild(work / "child.pid", child)
    monkeypatch.setattr(process, "time", clock)
    # No bound on how long it takes: an agent not killed would hold the test for its 600 s sleep,
    # and the record says which of the two ended it.
    assert agent_run(repo, address, out, config(tmp_path, "hang", budget_seconds=2), "--grace", "0.5") == 0
    assert clock.seen  # the child ran, and was seen from here
    wait_until(lambda: not living(child), "the agent's child to be gone")  # killed with the group, then reaped
    record = json.loads((out / "run-1" / f"{TASK_NAME}.agent.json").read_text())
    assert record["killed_at_deadline"] and record["finalized"] and record["turns"] == 1
    with Client(address, "alice-token") as agent:
        attempt = agent.get_attempt(record["attempt"])
        evaluation = agent.get_evaluation(attempt.final_evaluation)
    assert attempt.submitted and attempt.finalized
    assert evaluation.candidate_digest == digest_files({"kernel.py": b"speedup=4.0\n"})
    assert not (out / ".work" / "run-1" / "triton2triton" / TASK_NAME / "home").exists()  # its token is gone too


TAKERS = {
    # /tmp: in the sandbox a folder of its HOME on disk, where the watch reads it (not an uncounted tmpfs)
    "disk": ("disk=16M", "head -c 67108864 /dev/zero > /tmp/fill; sleep 600", "to disk, over the limit of 16.0 MiB"),
    # Its IPC namespace's shared memory bounded from outside (limits/ipc.py; a root runner only),
    # read once it is set: then the agent writes a file past its disk limit to be stopped.
    "shared memory": (
        "memory=1G,disk=16M",
        "sleep 1; cat /proc/sys/kernel/shmall > shmall; head -c 67108864 /dev/zero > /tmp/fill; sleep 600",
        "to disk, over the limit of 16.0 MiB",
    ),
    "processes": (
        "processes=20",
        "for n in $(seq 40); do sleep 600 & done; sleep 600",
        "processes, over the limit of 20",
    ),
    # Root ignores RLIMIT_NPROC, but not its control group's pids.max (limits/cgroups.py), where the
    # host allows groups: the kernel refuses the threads past the limit and the record says so.
    # Elsewhere RLIMIT_NPROC may refuse them first (the agent's stderr says so; it ends on its own).
    "threads": (
        "threads=60",
        f"{sys.executable} -c 'import threading, time\nfor _ in range(100):\n"
        "    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\ntime.sleep(600)'",
        ("threads, over the limit of 60", "refused a process or thread over its limit of 60 tasks"),
    ),
}


@pytest.mark.parametrize("name", TAKERS)
def test_an_agent_over_a_limit_is_stopped_and_says_so(
    repo: Path, address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    setting, script, said = TAKERS[name]
    monkeypatch.setenv(AGENT_VARIABLE, setting)
    monkeypatch.setitem(
        ADAPTERS, "taker", CommandAdapter("taker", ("sh", "-c", "echo speedup=2.0 > candidate/kernel.py; " + script))
    )
    out = tmp_path / "out"
    begin = time.monotonic()
    assert agent_run(repo, address, out, config(tmp_path, "taker", budget_seconds=300)) == 0
    assert time.monotonic() - begin < 120  # stopped by the watch: its 600 s sleeps and 300 s budget never ran out
    record = json.loads((out / "run-1" / f"{TASK_NAME}.agent.json").read_text())
    stderr = (out / ".work" / "run-1" / "triton2triton" / TASK_NAME / "agent.stderr.log").read_text()
    refused = os.geteuid() != 0 and "can't start new thread" in stderr  # the backstop, before the watch
    texts = (said,) if isinstance(said, str) else said
    assert refused or any(text in record["stopped_over_limit"] for text in texts), (record, stderr[-2000:])
    assert not record["killed_at_deadline"] and record["finalized"]  # what it wrote is still evaluated
    if name == "shared memory" and os.geteuid() == 0:
        workspace = out / ".work" / "run-1" / "triton2triton" / TASK_NAME / "workspace"
        assert int((workspace / "shmall").read_text()) == (1 << 30) // os.sysconf("SC_PAGE_SIZE")


def test_malformed_agent_limits_are_refused_before_any_attempt(
    repo: Path, address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(AGENT_VARIABLE, "memory=much")
    out = tmp_path / "out"
    assert agent_run(repo, address, out, config(tmp_path, "script", flags=["--versions", str(tmp_path)])) != 0
    assert not out.exists()  # nothing was run, no attempt opened
    with Client(address, "ops-token") as operator:
        assert all(row.agent != "alice" for row in operator.leaderboard())


def test_the_agent_sees_its_attempt_token_and_nothing_of_the_runner(
    kit: Any, repo: Path, address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token,ops:ops-token:operator")
    monkeypatch.setenv("ARENA_OPERATOR_TOKEN", "ops-token")
    monkeypatch.setenv("TEST_PROVIDER_KEY", "sk-planted")
    dump = "import json, os, pathlib; pathlib.Path('env.json').write_text(json.dumps(dict(os.environ)))"
    monkeypatch.setitem(ADAPTERS, "dump", CommandAdapter("dump", (sys.executable, "-c", dump)))
    out = tmp_path / "out"
    assert agent_run(repo, address, out, config(tmp_path, "dump")) == 0
    workspace = out / ".work" / "run-1" / "triton2triton" / TASK_NAME / "workspace"
    env = json.loads((workspace / "env.json").read_text())
    allowed = {
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "PYTHONPATH",
        "ARENA_RUNNER",
        "ARENA_TOKEN",
        "ARENA_ATTEMPT",
        "ARENA_WORKSPACE",
        "LC_CTYPE",
        "PWD",
    }  # fmt: skip (PWD: the sandbox names the workspace)
    with Egress(()) as egress:
        allowed |= set(proxied({}, egress))  # the sandbox's own proxy (the bridge on the agent's loopback)
    assert set(env) <= allowed, set(env) - allowed
    assert env.get("PWD", str(workspace)) == str(workspace)
    assert env["ARENA_TOKEN"] == "alice-token" and env["ARENA_RUNNER"] == address
    assert not any("ops-token" in value or "sk-planted" in value for value in env.values())
    assert Path(env["HOME"]).parent == workspace.parent and env["HOME"] != os.environ.get("HOME")
    # Nothing the task keeps from agents reached the workspace: no exemplar, no wrong candidate.
    assert not any(kit.SECRET in path.read_bytes() for path in workspace.rglob("*") if path.is_file())
    assert sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file()) == [
        "TASK.md", "candidate/kernel.py", "env.json"
    ]  # fmt: skip


def test_a_config_naming_no_known_adapter_is_refused(repo: Path, address: str, tmp_path: Path) -> None:
    assert agent_run(repo, address, tmp_path / "out", config(tmp_path, "vim")) == cli.EXIT_OTHER_ERROR
    assert not (tmp_path / "out").exists()


def test_with_no_runner_one_starts_in_this_process_with_a_token_for_the_agent(
    kit: Any, repo: Path, make_runner: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = make_runner(repo, kit.FakeEvaluate())  # the fast fake evaluation, behind the embedded server
    monkeypatch.setattr("arena.api.embedded.open_runner", lambda *args, **kwargs: runner)
    monkeypatch.setattr("arena.api.embedded.sweep_run_folders", lambda: [])
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    versions = write_versions(tmp_path / "replay", ["speedup=2.0\n"])
    out = tmp_path / "out"
    argv = ["--repo-root", str(repo), "agent", "run", "--suite", "tasks/triton2triton", "--out", str(out), "--config"]
    assert cli.main([*argv, config(tmp_path, "script", flags=["--versions", str(versions)])]) == 0
    record = json.loads((out / "run-1" / f"{TASK_NAME}.agent.json").read_text())
    assert record["final_evaluation"] and not record["finalized"]
    # Filed under the configuration's name: the embedded runner knew the agent by its own token.
    assert record["agent"] == "tester" and record["tool_calls"] == 3


def test_a_suite_names_its_tasks_or_covers_its_folder(kit: Any, repo: Path, address: str) -> None:
    from arena.agents.orchestrator import select_tasks

    (repo / "tasks" / "BUILD").write_text('kernel_task_suite(name="mixed", tasks=["tasks/hip2hip/scan"])\n')
    with Client(address, "alice-token") as agent:
        views = agent.list_tasks()

    def chosen(suite: str | None, tasks: list[str]) -> list[str]:
        return [view.address for view in select_tasks(views, repo, suite, tasks)]

    assert chosen("tasks/triton2triton:all", []) == [kit.SOFTMAX]  # no such BUILD target: the folder's tasks
    assert chosen("//tasks:mixed", []) == [kit.SCAN]
    assert chosen("tasks", []) == [kit.SCAN, kit.SOFTMAX]
    assert chosen(None, ["tasks/hip2hip/scan", kit.SCAN]) == [kit.SCAN]
    with pytest.raises(UnknownTask, match="no kernel_task_suite named 'nope'"):
        chosen("tasks:nope", [])
    with pytest.raises(UnknownTask, match="no task 'tasks/hip2hip/other'"):
        chosen(None, ["tasks/hip2hip/other"])


def test_an_agent_that_cannot_start_is_a_clear_error_and_its_attempt_is_closed(
    repo: Path, address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ADAPTERS, "absent", CommandAdapter("absent", ("no-such-agent-cli", "-p", "x")))
    out = tmp_path / "out"
    assert agent_run(repo, address, out, config(tmp_path, "absent")) == cli.EXIT_OTHER_ERROR
    with Client(address, "alice-token") as agent:
        (row,) = (row for row in agent.leaderboard() if row.agent == "alice")
    assert row.tasks == 1  # finalized (the baseline), not left open until its deadline
