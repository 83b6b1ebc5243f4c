"""A tiny repository with two tasks, a fast fake evaluate, and a runner served on 127.0.0.1:0."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import grpc
import pytest

from arena.api.server import create_server
from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.auth import Tokens, parse_tokens
from arena.runner.runner import Runner
from arena.scoring.records import Score
from arena.task.load import load_tasks
from arena.task.task import Task
from arena_testing.waiting import WAIT_S

SOFTMAX = "tasks/triton2triton/softmax:softmax"
SCAN = "tasks/hip2hip/scan:scan"
TOKENS_TEXT = "alice:alice-token,bob:bob-token,ops:ops-token:operator"
BUILD_TEMPLATE = """
kernel_task(
    name="{name}",
    category="{category}",
    description="Row-wise softmax.",
    baseline=["{kernel}"],
    entry="{kernel}:{symbol}",
    signature="softmax(x: [M, N] $dtype) -> [M, N] $dtype",
    reference="reference.py:softmax",
    sources=["reference.py"],
    inputs=[{{"name": "x", "shape": ["M", "N"], "dtype": "$dtype"}}],
    outputs=[{{"name": "y", "shape": ["M", "N"], "dtype": "$dtype"}}],
    abi={abi},
    cases=[
        {{"name": "small", "dims": {{"M": 7, "N": 129}}, "dtype": "float32", "seed": 1}},
        {{"name": "big", "dims": {{"M": 4096, "N": 4096}}, "dtype": "float16", "seed": 3, "timed": True}},
    ],
    exemplars=["exemplars/fast"],
    wrong="wrong",
    budget_seconds={budget_seconds},
    iterations={iterations},
)
"""
SECRET = b"EXEMPLAR-SECRET"


def write_repo(root: Path, iterations: int = 3, budget_seconds: int = 3600) -> Path:
    """A repository with a triton2triton and a hip2hip task; exemplar and wrong files hold SECRET."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pants.toml").write_text("")
    for address, kernel, symbol, abi in (
        (SOFTMAX, "kernel.py", "softmax", "[]"),
        (SCAN, "kernel.hip", "launch", '["x", "y", "M", "N"]'),
    ):
        folder, name = address.split(":")
        category = folder.split("/")[1]
        task_dir = root / folder
        (task_dir / "exemplars" / "fast").mkdir(parents=True)
        (task_dir / "wrong").mkdir()
        (task_dir / "BUILD").write_text(
            BUILD_TEMPLATE.format(
                name=name, category=category, kernel=kernel, symbol=symbol, abi=abi,
                iterations=iterations, budget_seconds=budget_seconds,
            )
        )  # fmt: skip
        (task_dir / kernel).write_text(f"def {symbol}(x):\n    return x.softmax(-1)\n")
        (task_dir / "reference.py").write_text("def softmax(x):\n    return x.softmax(-1)  # REFERENCE\n")
        (task_dir / "exemplars" / "fast" / kernel).write_bytes(SECRET)
        (task_dir / "wrong" / kernel).write_bytes(SECRET)
    return root


def speedup_of(candidate: Candidate) -> float:
    """Fake candidates state their speedup as text: b"speedup=2.5"; b"broken" does not compile."""
    text = b"".join(candidate.files.values()).decode(errors="replace")
    for word in text.split():
        if word.startswith("speedup="):
            return float(word.removeprefix("speedup="))
    return 1.0


@dataclass
class FakeEvaluate:
    """A fast stand-in for arena.evaluation.evaluate.evaluate; counts calls, optionally held or failing.

    With a `gate`, each call waits for one permit of it (the test's gate.release()) before it
    answers: a job the test holds mid-run for as long as it needs, then lets go. `delay_s` only
    lets concurrent jobs overlap; no test's verdict may depend on it.
    """

    delay_s: float = 0.0
    fail_with: Exception | None = None
    gate: threading.Semaphore | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (task, candidate digest)
    running: int = 0
    most_running: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, task: Task, candidate: Candidate, repo_root: Path, settings: Any, store: Any) -> Evaluation:
        with self.lock:
            self.calls.append((task.address, candidate.digest))
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if self.gate is not None and not self.gate.acquire(timeout=WAIT_S):
                raise AssertionError(f"the test never released this held job ({WAIT_S:g} s)")
            time.sleep(self.delay_s)
            if self.fail_with is not None:
                raise self.fail_with
            return fake_evaluation(task, candidate)
        finally:
            with self.lock:
                self.running -= 1


def fake_evaluation(task: Task, candidate: Candidate) -> Evaluation:
    broken = any(b"broken" in content for content in candidate.files.values())
    speedup = 0.0 if broken else speedup_of(candidate)
    return Evaluation(
        id="fake",
        task=task.address,
        task_digest="t" * 64,
        candidate_digest=candidate.digest,
        status=Status.COMPILE_ERROR if broken else Status.PASSED,
        compiled=not broken,
        correct=not broken,
        score=Score(
            points=0.0 if broken else 120 + 100 * speedup,
            speedup=speedup,
            geomean_speedup=speedup,
            fast_p={"1.0": speedup > 1.0},
        ),
        created_unix_ms=1,
    )


def softmax_candidate(text: str, task: str = SOFTMAX) -> Candidate:
    return Candidate(task=task, files={"kernel.py": text.encode()})


class Kit:
    """The helpers above, handed to tests as a fixture (test modules import no conftest)."""

    SOFTMAX = SOFTMAX
    SCAN = SCAN
    SECRET = SECRET
    FakeEvaluate = FakeEvaluate
    write_repo = staticmethod(write_repo)
    candidate = staticmethod(softmax_candidate)
    fake_evaluation = staticmethod(fake_evaluation)
    speedup_of = staticmethod(speedup_of)


@pytest.fixture
def kit() -> type[Kit]:
    return Kit


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def tokens() -> Tokens:
    return Tokens(parse_tokens(TOKENS_TEXT))


@pytest.fixture
def make_runner(tmp_path: Path) -> Iterator[Callable[..., Runner]]:
    """make_runner(repo, evaluate, **options) -> a started Runner on tmp_path/state; stopped at the end."""
    runners: list[Runner] = []

    def make(repo: Path, evaluate: Callable[..., Evaluation], **options: Any) -> Runner:
        options.setdefault("durable", False)  # fsync is not what these tests check
        runner = Runner(repo, tmp_path / "state", evaluate, tasks=load_tasks(repo), **options).start()
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.stop(timeout_s=2)


@dataclass
class Served:
    runner: Runner
    server: grpc.Server
    address: str


@pytest.fixture
def serve_runner(tokens: Tokens) -> Iterator[Callable[[Runner], Served]]:
    """serve_runner(runner[, tokens]) -> a started server on 127.0.0.1:0; stopped at the end."""
    servers: list[grpc.Server] = []

    def serve(runner: Runner, known: Tokens | None = None) -> Served:
        server, port = create_server("127.0.0.1:0", runner, known or tokens)
        server.start()
        servers.append(server)
        return Served(runner, server, f"127.0.0.1:{port}")

    yield serve
    for server in servers:
        server.stop(0).wait(5)
