"""The pool end to end on loopback: `arena pool server` (BuildGrid's own Execution service and
scheduler over a private PostgreSQL), two `arena pool worker`s on the CPU taking leases through
the Remote Workers API, and the remote executor and the shared score cache in front of them."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

import arena.cli.main  # noqa: F401  (the commands the child processes run)
from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.environment.probe import sandbox_tool
from arena.evaluation.evaluate import evaluate
from arena.harness.settings import HarnessSettings
from arena.pool.processes import stop_process
from arena.task.load import load_task
from arena.task.task import Task
from arena_testing.buildgrid_server import free_port
from arena_testing.processes import running_in
from arena_testing.scale_task import SCALE_ADDRESS, SCALE_KERNEL, WRONG_KERNEL, write_scale_repo

WORKERS = ("w1", "w2")
# Short, so the killed worker's job moves soon; not the least BuildGrid allows (4 s), so that a
# worker slowed by a loaded machine still answers in time.
KEEPALIVE_S = 6
# The slow candidate sleeps this long at import, then leaves WOKE beside its kernel: long enough to
# kill its worker mid-lease. The killed run must never wake (it once did: the worker killed while
# bubblewrap started the sandbox, before bubblewrap's child asked to die with its parent; the
# sandbox now holds a lifeline, arena.limits.Lifeline).
SLOW_S = 8
WOKE = "woke"


def missing() -> str:
    for module in ("buildgrid", "psycopg2"):
        if importlib.util.find_spec(module) is None:
            return f"the `{module}` package is not installed"
    if shutil.which("initdb") is None and not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    if not sandbox_tool():
        return "no bubblewrap sandbox can be made here: a worker refuses to start (Debian: apt-get install bubblewrap)"
    return ""


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def arena_command(*argv: str, log: Path, **variables: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli.main", *argv],
            env={**environment(), **variables},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def wait_for(log: Path, pattern: str, process: subprocess.Popen[bytes], timeout_s: float = 90.0) -> re.Match[str]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found
        assert process.poll() is None, f"{log.name} ended ({process.returncode}):\n{log.read_text()[-3000:]}"
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} in {log.name} within {timeout_s:g} s:\n{log.read_text()[-3000:]}")


@dataclass
class Pool:
    endpoint: str
    folder: Path
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def token_file(self, role: str) -> Path:
        """A token of `role` from `arena pool token`, in a file (made once)."""
        path = self.folder / f"{role}.token"
        if not path.exists():
            made = subprocess.run(
                [sys.executable, "-m", "arena.cli.main", "pool", "token", "--role", role,
                 "--state", str(self.folder / "state"), "--name", f"test-{role}", "--out", str(path)],
                env=environment(), capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert made.returncode == 0, made.stderr
        return path

    def token(self, role: str) -> str:
        return self.token_file(role).read_text().strip()

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def leases(self, name: str, state: str) -> list[str]:
        return re.findall(rf"lease (\S+) {state}", self.log(name).read_text(errors="replace"))

    def logs(self) -> str:
        """The workers' logs, for a failure's message."""
        return "\n".join(
            f"--- {n}.log\n{self.log(n).read_text(errors='replace')[-4000:]}" for n in sorted(self.workers)
        )

    def work(self, name: str) -> Path:
        """Where the worker lays out its jobs."""
        return self.folder / f"{name}-work"

    def start_worker(self, name: str) -> None:
        self.work(name).mkdir()
        process = arena_command(
            "pool", "worker", "--server", self.endpoint, "--gpu", "cpu", "--bot-id", name,
            "--work", str(self.work(name)), "--token-file", str(self.token_file("worker")), log=self.log(name),
        )  # fmt: skip
        self.workers[name] = process
        wait_for(self.log(name), r"bot session", process)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    reason = missing()
    if reason:
        pytest.skip(reason)
    # A short path: PostgreSQL's socket lives in the state folder (sun_path holds 108 bytes).
    folder = Path(tempfile.mkdtemp(prefix="arena-pool-"))
    endpoint = f"127.0.0.1:{free_port()}"
    server = arena_command(
        "pool", "server", "--listen", endpoint, "--state", str(folder / "state"),
        "--keepalive-s", str(KEEPALIVE_S), "--reap-s", "0.5",
        log=folder / "server.log",
    )  # fmt: skip
    pool = Pool(endpoint, folder)
    try:
        wait_for(folder / "server.log", r"arena pool server on ", server)
        threads = [threading.Thread(target=pool.start_worker, args=(name,)) for name in WORKERS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert set(pool.workers) == set(WORKERS)
        yield pool
    finally:
        for process in pool.workers.values():
            process.terminate()  # all at once: each ends its poll of the server first
        for process in pool.workers.values():
            stop_process(process)
        stop_process(server)
        log, stopped = (folder / "server.log").read_text()[-3000:], server.returncode
        sockets = list((folder / "state" / "postgres").glob(".s.PGSQL.*"))
        shutil.rmtree(folder, ignore_errors=True)
        assert stopped == 0, log
        assert not sockets, "PostgreSQL outlived the server"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scale_repo(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def task(repo: Path) -> Task:
    return load_task(repo, SCALE_ADDRESS)


# The workers find python3 next to this interpreter (on a GPU machine: on the action's PATH).
ACTION_PATH = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"


def executor(pool: Pool) -> Any:
    from arena.executors.remote import RemoteExecutor

    return RemoteExecutor(pool.endpoint, "cpu", backend="cpu", path=ACTION_PATH, token=pool.token("runner"))


def settings(seed: int) -> HarnessSettings:
    return HarnessSettings(backend="cpu", timeout_s=240, cases=("small",), secret_seed=seed)


def test_both_workers_take_jobs_and_repeats_come_from_the_caches(pool: Pool, repo: Path, task: Task) -> None:
    from arena.cache.reapi_store import ReapiStore

    remote = executor(pool)
    store = ReapiStore(pool.endpoint, b"k" * 32, token=pool.token("runner"))
    wrong = Candidate(SCALE_ADDRESS, {"kernel.py": WRONG_KERNEL.encode()})
    environment = remote.environment(Environment())
    results: dict[str, Any] = {}

    def run_baseline() -> None:
        results["baseline"] = remote.run(task, None, repo, settings(1))

    def evaluate_wrong() -> None:
        results["wrong"] = evaluate(task, wrong, repo, settings(2), store, runner=remote.run, environment=environment)

    threads = [threading.Thread(target=run_baseline), threading.Thread(target=evaluate_wrong)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["baseline"].status == "PASSED" and results["baseline"].correct, results["baseline"].errors
    assert {"small", "small~hidden0"} <= {case.name for case in results["baseline"].cases}
    assert results["wrong"].status == "INCORRECT" and not results["wrong"].cached
    # Each worker holds one lease at a time: the two jobs went to the two workers.
    done = {name: pool.leases(name, "done") for name in WORKERS}
    assert all(done.values()), done

    # The same job again is the same action: the action cache answers, no worker runs it.
    assert remote.run(task, None, repo, settings(1)) == results["baseline"]
    # The score cache shared through the pool's CAS answers the evaluation, from another store too.
    again = evaluate(
        task,
        wrong,
        repo,
        settings(2),
        ReapiStore(pool.endpoint, b"k" * 32, token=pool.token("runner")),
        runner=remote.run,
        environment=environment,
    )
    assert again.cached and again.status == "INCORRECT" and again.cache_key == results["wrong"].cache_key
    assert {name: pool.leases(name, "done") for name in WORKERS} == done


def _described(pid: int) -> str:
    """A process's name, state and pending signals, for a failure's message."""
    try:
        status = dict(
            line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line
        )
    except OSError:
        return f"{pid}: gone"
    try:
        waiting = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        waiting = "?"
    fields = ("Name", "State", "PPid", "NSpid", "ShdPnd")
    return f"{pid} " + " ".join(f"{name} {status.get(name, '?')}" for name in fields) + f" in {waiting}"


def test_a_job_whose_worker_is_killed_runs_on_the_other(pool: Pool, repo: Path, task: Task) -> None:
    woken = f"import pathlib, time\ntime.sleep({SLOW_S})\npathlib.Path(__file__).with_name({WOKE!r}).touch()\n"
    slow = Candidate(SCALE_ADDRESS, {"kernel.py": f"{woken}{SCALE_KERNEL}".encode()})
    before = {name: len(pool.leases(name, "started")) for name in WORKERS}
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.update(result=executor(pool).run(task, slow, repo, settings(3))))
    thread.start()
    deadline = time.monotonic() + 60
    taker = ""
    while not taker and time.monotonic() < deadline:
        taker = next((n for n in WORKERS if len(pool.leases(n, "started")) > before[n]), "")
        time.sleep(0.05)
    assert taker, "no worker took the job"
    lease = pool.leases(taker, "started")[-1]
    while not running_in(pool.work(taker)) and time.monotonic() < deadline:
        time.sleep(0.05)  # the worker is fetching the input root: its command starts next
    assert running_in(pool.work(taker)), "the worker ran no command"
    pool.workers[taker].send_signal(signal.SIGKILL)  # mid-lease: the candidate is still asleep
    pool.workers[taker].wait()
    # Its command and all it started died with it (a PID namespace of their own, ended by its
    # lifeline): nothing of the lost run goes on beside the next one. Their exits may be slow on a
    # loaded machine; that the candidate never woke is what decides.
    deadline = time.monotonic() + 30
    while running_in(pool.work(taker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = running_in(pool.work(taker))
    assert not left, [_described(pid) for pid in left]
    thread.join(timeout=120)
    assert not list(pool.work(taker).rglob(WOKE)), "the killed worker's candidate went on"
    assert not thread.is_alive(), "the job was lost with its worker"
    assert outcome["result"].status == "PASSED", (outcome["result"].errors, pool.logs())
    other = next(n for n in WORKERS if n != taker)
    assert lease in pool.leases(other, "done")  # BuildGrid requeued the lease once the bot went silent
    assert lease not in pool.leases(taker, "done")


def test_arena_serve_sends_jobs_to_the_pool_and_keeps_scores_in_its_cas(
    pool: Pool, repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from arena.cache.reapi_store import ReapiStore
    from arena.client.client import Client

    state = tmp_path_factory.mktemp("runner")
    log = state / "serve.log"
    runner = arena_command(
        "--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(state), "--devices", "cpu",
        "--executor", "remote", "--remote", pool.endpoint, "--remote-gpu", "cpu", "--remote-backend", "cpu",
        "--remote-path", ACTION_PATH, "--store", "reapi", "--remote-token-file", str(pool.token_file("runner")),
        log=log, ARENA_TOKENS="alice:a-token",
    )  # fmt: skip
    try:
        address = wait_for(log, r"arena runner on (127\.0\.0\.1:\d+)", runner).group(1)
        before = {name: len(pool.leases(name, "done")) for name in pool.workers}
        with Client(address, "a-token", timeout_s=120) as client:
            attempt = client.open_attempt(SCALE_ADDRESS)
            evaluation = client.evaluate(Candidate(SCALE_ADDRESS, {"kernel.py": SCALE_KERNEL.encode()}), attempt.id)
        assert evaluation.status == "PASSED" and not evaluation.cached, evaluation.errors
        assert sum(len(pool.leases(name, "done")) for name in pool.workers) == sum(before.values()) + 1
        # The runner's score lives in the pool's action cache and CAS, sealed with its state's key.
        shared = ReapiStore(pool.endpoint, (state / "scores.key").read_bytes(), token=pool.token("runner"))
        assert shared.get(evaluation.cache_key) is not None
        assert not (state / "scores.sqlite").exists()
    finally:
        stop_process(runner)
    # A runner whose token the pool refuses does not start (before: every job failed, retried).
    refused = arena_command(
        "--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(state / "refused"),
        "--devices", "cpu", "--executor", "remote", "--remote", pool.endpoint, "--remote-gpu", "cpu",
        "--remote-token-file", str(pool.token_file("worker")),
        log=state / "refused.log", ARENA_TOKENS="alice:a-token",
    )  # fmt: skip
    try:
        assert refused.wait(timeout=60) != 0
    finally:
        stop_process(refused)
    assert "refused this runner (UNAUTHENTICATED)" in (state / "refused.log").read_text()


def refusal(call: Any) -> Any:
    """The status code the pool answered `call` with (None: it was served)."""
    import grpc

    try:
        call()
    except grpc.RpcError as error:
        return error.code()
    return None


def test_the_pool_serves_only_its_tokens_and_each_role_only_its_part(pool: Pool, tmp_path: Path) -> None:
    import grpc

    from arena.pool.worker import bots_protos
    from arena.reapi.cas import Cas, digest_of, reapi_protos
    from arena.reapi.channel import open_channel

    re_pb2, re_grpc = reapi_protos()[:2]
    bots_pb2, bots_grpc, _ = bots_protos()
    digest = digest_of(b"an action")

    def calls(token: str) -> dict[str, Any]:
        channel = open_channel(pool.endpoint, token)
        bot = bots_pb2.BotSession(bot_id=f"rogue-{token[-6:]}", status=bots_pb2.OK)
        result = re_pb2.ActionResult(exit_code=0)
        return {
            "read a result": lambda: Cas(channel).get_action_result(digest),
            "write a result": lambda: re_grpc.ActionCacheStub(channel).UpdateActionResult(
                re_pb2.UpdateActionResultRequest(action_digest=digest, action_result=result), timeout=30
            ),
            "queue an action": lambda: list(
                re_grpc.ExecutionStub(channel).Execute(re_pb2.ExecuteRequest(action_digest=digest), timeout=30)
            ),
            "become a worker": lambda: bots_grpc.BotsStub(channel).CreateBotSession(
                bots_pb2.CreateBotSessionRequest(parent="", bot_session=bot), timeout=30
            ),
        }

    denied = grpc.StatusCode.UNAUTHENTICATED
    # Without a token (loopback is not trusted), or with another pool's, nothing is served.
    forged = pool.token("runner").rsplit(".", 1)[0] + ".c2lnbmVkIGVsc2V3aGVyZQ"
    for token in ("", forged):
        assert {name: refusal(call) for name, call in calls(token).items()} == dict.fromkeys(calls(token), denied)
    # A runner reads and writes results and queues work, but cannot stand in for a worker (a rogue
    # bot is handed jobs, whose input roots hold the key their results are signed with).
    runner = {name: refusal(call) for name, call in calls(pool.token("runner")).items()}
    assert runner["read a result"] is None and runner["write a result"] is None
    assert runner["queue an action"] != denied  # served (its action is not in the CAS)
    assert runner["become a worker"] == denied
    # A worker takes leases, but cannot queue work or write the action cache.
    worker = calls(pool.token("worker"))
    assert refusal(worker["queue an action"]) == denied and refusal(worker["write a result"]) == denied

    # A runner checks its token at start: served, or refused with what to give it.
    from arena.errors import ArenaError
    from arena.executors.remote import RemoteExecutor

    assert executor(pool).check_access() == ""
    for token in ("", pool.token("worker")):
        with pytest.raises(ArenaError, match="refused this runner .*arena pool token --role runner"):
            RemoteExecutor(pool.endpoint, "cpu", backend="cpu", token=token).check_access()

    # `arena pool worker` without a worker's token stops at once and says why.
    log = tmp_path / "tokenless.log"
    tokenless = arena_command(
        "pool", "worker", "--server", pool.endpoint, "--gpu", "cpu", "--bot-id", "tokenless",
        "--token-file", str(pool.token_file("runner")), log=log,
    )  # fmt: skip
    try:
        assert tokenless.wait(timeout=60) != 0
    finally:
        stop_process(tokenless)
    assert "refused this worker (UNAUTHENTICATED)" in log.read_text(), log.read_text()


def test_a_tls_pool_takes_jobs_over_tls_alone(tmp_path_factory: pytest.TempPathFactory, repo: Path, task: Task) -> None:
    """A server given --tls-cert and --tls-key, a worker and the remote executor given its CA."""
    import grpc

    from arena.executors.remote import RemoteExecutor
    from arena.pool.tokens import ensure_secret, mint
    from arena.reapi.cas import Cas, digest_of
    from arena.reapi.channel import open_channel
    from arena_testing.tls_kit import self_signed

    if missing():
        pytest.skip(missing())
    folder = Path(tempfile.mkdtemp(prefix="arena-tls-pool-"))  # short: PostgreSQL's socket path
    certificate = self_signed(folder / "tls", "pool")
    endpoint = f"127.0.0.1:{free_port()}"
    server = arena_command(
        "pool", "server", "--listen", endpoint, "--state", str(folder / "state"), "--tls-cert",
        str(certificate.cert), "--tls-key", str(certificate.key), "--keepalive-s", str(KEEPALIVE_S),
        log=folder / "server.log",
    )  # fmt: skip
    worker = None
    try:
        wait_for(folder / "server.log", r"arena pool server on \S+ \(TLS\)", server)
        secret = ensure_secret(folder / "state").read_text()
        token_file = folder / "worker.token"
        token_file.write_text(mint(secret, "worker", "tls", days=1))
        token_file.chmod(0o600)
        (folder / "work").mkdir()
        worker = arena_command(
            "pool", "worker", "--server", endpoint, "--gpu", "cpu", "--bot-id", "tls", "--work",
            str(folder / "work"), "--token-file", str(token_file), "--tls-ca", str(certificate.cert),
            log=folder / "worker.log",
        )  # fmt: skip
        wait_for(folder / "worker.log", r"bot session", worker)
        runner = mint(secret, "runner", "tls", days=1)
        # In plaintext the server is not reached at all, token or not.
        plaintext = Cas(open_channel(endpoint, runner))
        assert refusal(lambda: plaintext.get_action_result(digest_of(b"x"))) == grpc.StatusCode.UNAVAILABLE
        remote = RemoteExecutor(endpoint, "cpu", backend="cpu", path=ACTION_PATH, token=runner, tls_ca=certificate.cert)
        result = remote.run(task, None, repo, settings(7))
        assert result.status == "PASSED" and result.correct, (
            result.errors,
            (folder / "worker.log").read_text()[-3000:],
        )
        assert re.search(r"lease \S+ done", (folder / "worker.log").read_text())
    finally:
        for process in (worker, server):
            if process is not None:
                stop_process(process)
        shutil.rmtree(folder, ignore_errors=True)
