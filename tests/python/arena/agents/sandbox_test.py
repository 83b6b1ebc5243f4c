"""Agents in their sandbox (arena.agents.sandbox), through `arena agent run` on a runner on loopback.

Planted: a scripted agent tries to read, by absolute path, the task's exemplar, wrong candidate
and reference, the repository's README, the runner's state, the default runner state and score
cache, another agent's workspace and an earlier run's, and finds none of them; it writes its
workspace and reaches the runner's port through the SDK. Without a sandbox the run is refused
unless --allow-unisolated, which the submissions record; the same probe, unisolated, reads the
exemplar, so the probe does see what it looks for when it is there."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.agents import sandbox
from arena.agents.adapter import AgentRun, Launch, scrubbed_env
from arena.agents.adapters import ADAPTERS
from arena.agents.egress import Egress, destination
from arena.agents.usage import Usage
from arena.cli import main as cli
from arena.client.client import Client
from arena.environment.users import DEFAULT_RANGE, ChildUser, Users
from arena.errors import ArenaError
from arena.runner.folders import agent_workspaces, runner_state, score_cache_folder
from arena_testing.processes import running_in

TASK = "tasks/triton2triton/softmax"
# Runs in the sandbox: tries every path it is given, reaches its attempt through the runner's
# port, leaves a secret of its own, edits the kernel and writes what it saw into its workspace.
PROBE = r"""
import json, os, sys
from pathlib import Path
from arena.client.client import Client

workspace = Path(os.environ["ARENA_WORKSPACE"])
targets = json.loads(sys.argv[1])
run = workspace.parents[2].name
if run != "run-1":  # the first run's workspace and HOME, by absolute path
    targets["earlier run's workspace"] = str(workspace.parents[3] / "run-1" / "triton2triton" / "softmax" / "workspace" / "mine.txt")
seen = {}
for name, path in targets.items():
    try:
        seen[name] = "read: " + Path(path).read_bytes()[:200].decode(errors="replace")
    except OSError as error:
        seen[name] = f"refused: {error.strerror}"
for name, (host, port) in json.loads(sys.argv[2]).items():  # services of the machine, by address
    import socket
    try:
        socket.create_connection((host, port), timeout=5).close()
        seen[name] = "open"
    except OSError:
        seen[name] = "refused"
    proxy = os.environ.get("HTTPS_PROXY", "").removeprefix("http://")
    if proxy:  # and through the proxy the agent is given
        ask = socket.create_connection((proxy.split(":")[0], int(proxy.split(":")[1])), timeout=5)
        ask.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\n\r\n".encode())
        seen[name + " via the proxy"] = ask.recv(100).split(b" ")[1].decode()
with Client(os.environ["ARENA_RUNNER"], os.environ["ARENA_TOKEN"]) as client:
    seen["runner"] = "open" if not client.get_attempt(os.environ["ARENA_ATTEMPT"]).submitted else "closed"
(workspace / "mine.txt").write_text("EXEMPLAR-SECRET of " + run)
(workspace / "candidate" / "kernel.py").write_text("speedup=2.0\n")
(workspace / "seen.json").write_text(json.dumps(seen))
print(json.dumps({"type": "probe"}))
"""


@dataclass(frozen=True)
class ProbeAdapter:
    """The probe as an agent, with the scrubbed environment every adapter gives."""

    name: str
    targets: dict[str, str]
    network: dict[str, tuple[str, int]] = dataclasses.field(default_factory=dict)

    def launch(self, run: AgentRun) -> Launch:
        argv = (sys.executable, "-c", PROBE, json.dumps(self.targets), json.dumps(self.network))
        return Launch(argv, scrubbed_env(run.home, run.mcp_env), {})

    def usage(self, events: bytes) -> Usage:
        return Usage(turns=len(events.splitlines()))


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    """sandbox_tool() asked again in each test (it reads ARENA_AGENT_SANDBOX)."""
    sandbox.sandbox_tool.cache_clear()
    yield
    sandbox.sandbox_tool.cache_clear()


@pytest.fixture
def served(kit: Any, repo: Path, make_runner: Any, serve_runner: Any) -> Any:
    return serve_runner(make_runner(repo, kit.FakeEvaluate()))


def plant(kit: Any, repo: Path, tmp_path: Path) -> dict[str, str]:
    """Secrets where an agent must not reach, by name -> absolute path."""
    (repo / "README.md").write_bytes(kit.SECRET)
    for folder in (runner_state(), score_cache_folder()):
        folder.mkdir(parents=True, exist_ok=True)
    (runner_state() / "runner.sqlite").write_bytes(kit.SECRET)
    (score_cache_folder() / "scores.sqlite").write_bytes(kit.SECRET)
    other = agent_workspaces() / "other-0123456789ab" / "run-1" / "triton2triton" / "softmax" / "workspace"
    (other / "candidate").mkdir(parents=True)
    (other / "candidate" / "kernel.py").write_bytes(kit.SECRET)
    task = repo / TASK
    return {
        "exemplar": str(task / "exemplars" / "fast" / "kernel.py"),
        "wrong candidate": str(task / "wrong" / "kernel.py"),
        "reference": str(task / "reference.py"),
        "repository README": str(repo / "README.md"),
        "runner state": str(tmp_path / "state" / "runner.sqlite"),  # the served runner's
        "default runner state": str(runner_state() / "runner.sqlite"),
        "score cache": str(score_cache_folder() / "scores.sqlite"),
        "another workspace": str(other / "candidate" / "kernel.py"),
    }


@contextlib.contextmanager
def planted_service() -> Iterator[int]:
    """A TCP service on the machine's loopback (a pool's database, another runner): its port."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def agent_run(repo: Path, address: str, tmp_path: Path, *extra: str) -> int:
    template = tmp_path / "prompt.md"
    template.write_text("Optimise $task.\n")
    config = json.dumps({"name": "prober", "adapter": "probe", "prompt_template": str(template)})
    argv = [
        "--repo-root",
        str(repo),
        "agent",
        "run",
        "--config",
        config,
        "--tasks",
        TASK,
        "--out",
        str(tmp_path / "out"),
    ]
    argv += ["--runner", address, "--token", "alice-token", "--operator-token", "ops-token"]
    return cli.main([*argv, *extra])


def workspace_of(run: int) -> Path:
    (config,) = (path for path in agent_workspaces().iterdir() if path.name.startswith("prober-"))
    (invocation,) = config.iterdir()  # each `arena agent run` gets a new folder under its configuration's
    return invocation / f"run-{run}" / "triton2triton" / "softmax" / "workspace"


def test_the_agent_sees_its_workspace_and_the_runner_and_nothing_it_must_not(
    kit: Any, repo: Path, served: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    targets = plant(kit, repo, tmp_path)
    with planted_service() as port:
        network = {"a service on loopback": ("127.0.0.1", port), "the cloud's metadata": ("169.254.169.254", 80)}
        monkeypatch.setitem(ADAPTERS, "probe", ProbeAdapter("probe", targets, network))
        assert agent_run(repo, served.address, tmp_path, "--runs", "2") == 0
    for run in (1, 2):
        workspace = workspace_of(run)
        stderr = (workspace.parent / "agent.stderr.log").read_text()
        seen = json.loads((workspace / "seen.json").read_text())  # it wrote its workspace
        expected = {name: "refused: No such file or directory" for name in targets}
        if run == 2:
            expected["earlier run's workspace"] = "refused: No such file or directory"
        for name in network:  # its own network: nothing there; the proxy refuses both (403)
            expected |= {name: "refused", f"{name} via the proxy": "403"}
        assert seen == {**expected, "runner": "open"}, stderr[-3000:]  # the runner's port, through the SDK
        refused = (workspace.parent / "network.log").read_text().splitlines()
        assert refused == [f"refused CONNECT 127.0.0.1:{port}", "refused CONNECT 169.254.169.254:80"]
        record = json.loads((tmp_path / "out" / f"run-{run}" / "softmax.agent.json").read_text())
        assert record["sandbox"].startswith("bwrap") and record["unisolated"] is False
        assert record["finalized"]  # the kernel it wrote was evaluated for it
    with Client(served.address, "ops-token") as operator:
        assert operator.get_evaluation(record["final_evaluation"]).score.speedup == pytest.approx(2.0)
    agent = json.loads((tmp_path / "out" / "run-1" / "agent.json").read_text())
    assert agent["sandbox"].startswith("bwrap") and agent["unisolated"] is False
    # The workspaces are outside the repository and the submissions.
    assert not workspace_of(1).is_relative_to(repo) and not workspace_of(1).is_relative_to(tmp_path / "out")


def test_without_a_sandbox_the_run_is_refused_unless_allowed_and_then_recorded(
    kit: Any, repo: Path, served: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    targets = plant(kit, repo, tmp_path)
    service = socket.create_server(("127.0.0.1", 0))
    network = {"a service on loopback": ("127.0.0.1", service.getsockname()[1])}
    monkeypatch.setitem(ADAPTERS, "probe", ProbeAdapter("probe", targets, network))
    monkeypatch.setenv("ARENA_AGENT_SANDBOX", "off")  # as on a machine without bubblewrap
    assert agent_run(repo, served.address, tmp_path) == cli.EXIT_OTHER_ERROR
    assert "--allow-unisolated" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not list(agent_workspaces().glob("prober-*"))
    with Client(served.address, "ops-token") as operator:
        assert not [row for row in operator.leaderboard() if row.agent == "alice"]  # no attempt was opened
    assert agent_run(repo, served.address, tmp_path, "--allow-unisolated") == 0
    assert "UNISOLATED" in capsys.readouterr().out
    for record in ("agent.json", "softmax.agent.json"):
        written = json.loads((tmp_path / "out" / "run-1" / record).read_text())
        assert (written["sandbox"], written["unisolated"]) == ("none", True)
    # Unisolated, the same probe reads what the sandbox hides.
    seen = json.loads((workspace_of(1) / "seen.json").read_text())
    assert seen["exemplar"] == "read: " + kit.SECRET.decode() and seen["repository README"].startswith("read: ")
    assert seen["a service on loopback"] == "open"
    service.close()


def test_a_folder_to_show_that_holds_a_hidden_one_is_refused_or_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    repo, workspace = tmp_path / "repo", tmp_path / "ws"
    (repo / "src").mkdir(parents=True)
    workspace.mkdir()
    env = {"PATH": os.environ["PATH"]}
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])  # as `python -m` puts its directory first
    argv = sandbox.sandboxed(("true",), env, [workspace], read_only=[repo / "src"], hidden=[repo], tmp=workspace)
    bound = {argv[index + 1] for index, word in enumerate(argv) if word in ("--bind", "--ro-bind")}
    assert str(repo / "src") in bound and str(repo) not in bound  # a folder inside the repository: shown
    assert str(tmp_path) not in bound  # the import path entry that holds the repository: left out
    # One inside a system folder is an empty folder there.
    shown = subprocess.run(sandbox.sandboxed(("ls", "/etc/ssl"), env, [workspace], hidden=["/etc/ssl"], tmp=workspace),
                           env=env, capture_output=True, text=True)  # fmt: skip
    assert shown.returncode == 0 and shown.stdout == "" and os.listdir("/etc/ssl")
    with pytest.raises(ArenaError, match=re.escape(f"would show {repo}, which holds {repo}")):
        sandbox.sandboxed(("true",), env, [workspace], read_only=[repo], hidden=[repo], tmp=workspace)
    with pytest.raises(ArenaError, match=re.escape(f"would show {tmp_path}, which holds {repo}")):
        sandbox.sandboxed(("true",), env, [tmp_path], hidden=[repo], tmp=tmp_path)
    with pytest.raises(ArenaError, match="not found on its PATH"):
        sandbox.sandboxed(("no-such-agent-cli",), env, [workspace], tmp=workspace)


def test_a_network_file_linking_out_of_etc_is_shown_at_its_target(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "stub-resolv.conf").write_text("nameserver 127.0.0.53\n")
    (tmp_path / "resolv.conf").symlink_to(tmp_path / "run" / "stub-resolv.conf")  # as systemd-resolved links it
    (tmp_path / "hosts").write_text("127.0.0.1 localhost\n")
    files = [str(tmp_path / name) for name in ("resolv.conf", "hosts", "absent")]
    assert sandbox.linked_out(files, ["/usr"]) == [str(tmp_path / "run" / "stub-resolv.conf")]
    assert sandbox.linked_out(files, [str(tmp_path / "run")]) == []  # already shown


def test_the_network_is_chosen_by_the_operator_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    for chosen, public in (("", True), ("filtered", True), ("closed", False)):
        monkeypatch.setenv(sandbox.NETWORK_VARIABLE, chosen)
        made = sandbox.agent_sandbox(())
        assert made is not None and made.tool.endswith(f"network {chosen or 'filtered'}")
        with made.egress("127.0.0.1:50051", "https://models.example/v1") as egress:  # type: ignore[union-attr]
            assert egress.named == (("127.0.0.1", 50051), ("models.example", 443)) and egress.public is public
    monkeypatch.setenv(sandbox.NETWORK_VARIABLE, "shared")
    shared = sandbox.agent_sandbox(())
    assert shared is not None and shared.egress("127.0.0.1:50051", "") is None
    monkeypatch.setenv(sandbox.NETWORK_VARIABLE, "open")
    with pytest.raises(ArenaError, match="expected one of filtered, closed, shared"):
        sandbox.agent_sandbox(())


# Inside its own network: a runner named on either loopback answers at the address the agent was given.
ECHO_CLIENT = r"""
import json, socket, sys
seen = {}
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as connection:
            connection.settimeout(10)
            connection.connect((host, int(sys.argv[1])))
            connection.sendall(b"ping")
            seen[host] = connection.recv(4).decode()
    except OSError as error:
        seen[host] = f"refused: {error}"
print(json.dumps(seen))
"""


@contextlib.contextmanager
def echo_service(host: str) -> Iterator[int]:
    """A service on the machine's `host` loopback that says back what it is sent: its port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server = socket.create_server((host, 0), family=family)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                with connection:
                    connection.sendall(connection.recv(4))

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_runner_on_either_loopback_is_reached_at_both_inside(tmp_path: Path, host: str) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    with echo_service(host) as port:
        runner = destination(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        assert runner == (host, port)
        with Egress((runner,), public=False) as egress:
            argv = sandbox.sandboxed(
                (sys.executable, "-c", ECHO_CLIENT, str(port)), env, [workspace], egress=egress, tmp=workspace
            )
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout) == {"127.0.0.1": "ping", "::1": "ping"}, done.stderr[-2000:]


# Run by a root runner: whom the agent is outside its sandbox, and what that lets it touch.
WHO = r"""
import json, os, pwd, sys
from pathlib import Path
try:
    secret = "read: " + Path(sys.argv[1]).read_text()
except OSError as error:
    secret = f"refused: {error.strerror}"
caps = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")]
Path("mine.txt").write_text("written")
print(json.dumps({"uid": os.getuid(), "caps": caps[0], "secret": secret, "name": pwd.getpwuid(os.getuid()).pw_name}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a runner that is not root gives its agents a user namespace")
def test_a_root_runners_agent_is_an_unprivileged_user_outside_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    monkeypatch.delenv(sandbox.USER_VARIABLE, raising=False)
    made = sandbox.agent_sandbox(())
    assert made is not None and made.users == Users(*DEFAULT_RANGE)
    first, last = DEFAULT_RANGE
    assert f"as a uid of its own of {first}-{last}" in made.tool  # recorded with the submissions
    held = made.lease()
    assert held is not None
    uid = held.user.uid
    assert first <= uid <= last and held.user.gid == uid
    shown, workspace, home = tmp_path / "shown", tmp_path / "workspace", tmp_path / "home"
    for folder in (shown, workspace, home):
        folder.mkdir()
    (shown / "root-only").write_text("ROOT-SECRET")
    (shown / "root-only").chmod(0o600)
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    launch = Launch((sys.executable, "-c", WHO, str(shown / "root-only")), env, {}, read_only=(str(shown),))
    try:
        argv = made.wrap(launch, workspace, home, user=held.user)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    finally:
        held.release()
    expected = {"uid": uid, "caps": "0000000000000000", "secret": "refused: Permission denied", "name": "arena-sandbox"}
    assert json.loads(done.stdout) == expected, done.stderr[-2000:]
    assert (workspace / "mine.txt").stat().st_uid == uid  # its files are its user's on the host
    # A user namespace of its own, as before under a root runner: 65534 inside, but root outside.
    (tmp_path / "before").mkdir()
    argv = sandbox.sandboxed(launch.argv, env, [tmp_path / "before"], read_only=[shown], tmp=tmp_path / "before")
    before = json.loads(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60).stdout)
    assert before["uid"] == 65534 and before["secret"] == "read: ROOT-SECRET"


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner picks its agents' user")
@pytest.mark.parametrize("given", ["0", "0:0", "0-9", "agent", "65533:-1"])
def test_an_agent_user_that_is_root_or_malformed_is_refused(monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    monkeypatch.setenv(sandbox.USER_VARIABLE, given)
    with pytest.raises(ArenaError, match=f"{sandbox.USER_VARIABLE}=.*does not name unprivileged users"):
        sandbox.agent_sandbox(())


SHM = (
    "import os\nopen('/dev/shm/mine', 'wb').write(b'x')\nshown = os.statvfs('/dev/shm')\n"
    "print(shown.f_blocks * shown.f_frsize)\n"
)


def test_the_agents_dev_shm_is_its_own_bounded_and_writable(tmp_path: Path) -> None:
    """bubblewrap's /dev alone held /dev/shm as part of an unbounded tmpfs (memory the watch does
    not read) that only the sandbox's root could write: now a tmpfs of its own, bounded, mode 1777."""
    from arena.harness.sandbox import SHM_BYTES, _has_size

    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    users = [None, *([ChildUser(65533, 65533)] if os.geteuid() == 0 else [])]
    for user in users:
        workspace = tmp_path / f"ws-{user.uid if user else 'ns'}"
        workspace.mkdir()
        if user is not None:
            sandbox.hand_over([workspace], user)
        argv = sandbox.sandboxed((sys.executable, "-c", SHM), env, [workspace], tmp=workspace, user=user)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (user, done.stderr[-2000:])
        if _has_size():
            assert int(done.stdout) == SHM_BYTES


# Started as its own process, so that it dies in the middle of the agent sandbox's start.
AGENT_LAUNCHER = """
import os, signal, subprocess, sys, time
from pathlib import Path
from arena.agents.sandbox import sandboxed
from arena.limits.limits import Lifeline
work, delay = Path(sys.argv[1]), float(sys.argv[2])
lifeline = Lifeline()
env = {"PATH": "/usr/bin:/bin"}
argv = sandboxed(("sh", "-c", "sleep 1.5; echo > woke"), env, [work], tmp=work / "tmp", lifeline=lifeline)
subprocess.Popen(argv, cwd=work, env=env, start_new_session=True, pass_fds=(lifeline.fd,))
time.sleep(delay)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_an_agent_sandbox_ends_with_its_launcher_killed_while_it_starts(tmp_path: Path) -> None:
    # bubblewrap's --die-with-parent leaves a window while it starts (tests/python/arena/limits/
    # lifeline_test.py): an orchestrator killed there left the agent running, with its network.
    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    variables = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    folders = []
    for index, delay in enumerate((0.0, 0.0, 0.002, 0.01, 0.05)):
        work = tmp_path / f"run{index}"
        (work / "tmp").mkdir(parents=True)
        work.chmod(0o777)  # the agent's user (nobody, in a user namespace) may write `woke` there
        launcher = subprocess.run([sys.executable, "-c", AGENT_LAUNCHER, str(work), str(delay)], env=variables)
        assert launcher.returncode == -9
        folders.append(work)
    for work in folders:
        deadline = time.monotonic() + 10
        while running_in(work) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running_in(work) and not (work / "woke").exists(), work.name


def test_an_agent_whose_orchestrator_lives_runs_to_its_end(tmp_path: Path) -> None:
    from arena.agents.process import run_agent_process
    from arena.limits.limits import Lifeline

    if not sandbox.sandbox_tool():
        pytest.skip("no agent sandbox on this machine (bubblewrap missing or user namespaces refused)")
    work = tmp_path / "run"
    (work / "tmp").mkdir(parents=True)
    work.chmod(0o777)
    env = {"PATH": "/usr/bin:/bin"}
    with Lifeline() as lifeline:
        argv = sandbox.sandboxed(("sh", "-c", "echo > woke; exit 3"), env, [work], tmp=work / "tmp", lifeline=lifeline)
        assert "--as-pid-1" in argv
        finished = run_agent_process(
            argv, work, env, time.time() + 60, tmp_path / "stderr", sandboxed=True, pass_fds=(lifeline.fd,)
        )
    assert finished.returncode == 3 and (work / "woke").exists(), (tmp_path / "stderr").read_text()
