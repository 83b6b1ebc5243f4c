"""The Runner's domain rules, without gRPC: budgets, idempotency, ownership, failures, restarts."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from arena.candidate.candidate import Candidate
from arena.errors import (
    BudgetExhausted,
    InvalidCandidate,
    InvalidRequest,
    NoDevice,
    NotFound,
    NotReady,
    PermissionDenied,
    StateBusy,
    Unisolated,
    UnknownTask,
)
from arena.evaluation.evaluation import Evaluation
from arena.runner.auth import Identity
from arena.runner.records import Progress
from arena.runner.runner import Runner, job_id
from arena.task.load import load_tasks
from arena_testing.scale_task import SCALE_ADDRESS, SCALE_KERNEL, WRONG_KERNEL, write_scale_repo

ALICE = Identity("alice")
BOB = Identity("bob")
OPS = Identity("ops", operator=True)
SOFTMAX = "tasks/triton2triton/softmax:softmax"
SCAN = "tasks/hip2hip/scan:scan"


def final(progress: Iterator[Progress]) -> Evaluation:
    steps = list(progress)
    assert steps[-1].stage == "done" and steps[-1].evaluation is not None
    return steps[-1].evaluation


def test_views_hide_exemplars_wrong_and_reference(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate())
    views = runner.list_tasks(ALICE)
    assert [view.address for view in views] == [SCAN, SOFTMAX]
    assert [view.address for view in runner.list_tasks(ALICE, "hip2hip")] == [SCAN]
    view = runner.get_task(ALICE, "tasks/triton2triton/softmax")
    assert set(view.baseline_files) == {"kernel.py"}
    assert all(
        kit.SECRET not in content and b"REFERENCE" not in content for content in view.baseline_files.values()
    )
    assert len(view.digest) == 64 and view.iterations == 3
    with pytest.raises(UnknownTask):
        runner.get_task(ALICE, "tasks/triton2triton/nope")
    with pytest.raises(UnknownTask):
        runner.get_task(ALICE, "../etc/passwd")


def test_attempt_budget_counts_iterations_and_repeats_are_free(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate()
    runner = make_runner(repo, fake)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    assert attempt.iterations_left == 3
    first = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.5")))
    again = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.5")))
    assert first.id == again.id and first.score.speedup == 1.5
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2
    final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=3")))
    with pytest.raises(BudgetExhausted):
        runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=4"))
    assert len(fake.calls) == 3
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 0


def test_deadline_refuses_evaluations(repo: Path, make_runner, kit) -> None:
    now = [1000.0]
    runner = make_runner(repo, kit.FakeEvaluate(), clock=lambda: now[0])
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    assert attempt.deadline_unix_ms == (1000 + 3600) * 1000
    now[0] += 3600.5
    with pytest.raises(BudgetExhausted, match="deadline"):
        runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"))
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3


def test_refusals_spend_nothing(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate()
    runner = make_runner(repo, fake)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(InvalidCandidate):
        runner.evaluate(ALICE, attempt.id, Candidate(SOFTMAX, {"../BUILD": b"x"}))
    with pytest.raises(InvalidCandidate):
        runner.evaluate(ALICE, attempt.id, Candidate(SOFTMAX, {}))
    with pytest.raises(InvalidRequest):
        runner.evaluate(ALICE, attempt.id, Candidate(SCAN, {"kernel.hip": b"x"}))
    with pytest.raises(PermissionDenied):
        runner.evaluate(BOB, attempt.id, kit.candidate("x"))
    with pytest.raises(NotFound):
        runner.evaluate(ALICE, "no-such-attempt", kit.candidate("x"))
    with pytest.raises(PermissionDenied, match="operators"):
        runner.evaluate(ALICE, "", kit.candidate("x"))
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3 and fake.calls == []
    assert final(runner.evaluate(OPS, "", kit.candidate("speedup=2"))).score.speedup == 2


def test_submit_and_ownership(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate())
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    other = runner.open_attempt(ALICE, SOFTMAX)
    evaluation = final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    with pytest.raises(PermissionDenied):
        runner.get_evaluation(BOB, evaluation.id)
    assert runner.get_evaluation(OPS, evaluation.id) == evaluation
    with pytest.raises(PermissionDenied):
        runner.get_attempt(BOB, attempt.id)
    with pytest.raises(NotFound):
        runner.submit(BOB, runner.open_attempt(BOB, SOFTMAX).id, evaluation.id)
    with pytest.raises(InvalidRequest):
        runner.submit(ALICE, other.id, evaluation.id)
    submitted = runner.submit(ALICE, attempt.id, evaluation.id)
    assert submitted.submitted and submitted.final_evaluation == evaluation.id
    with pytest.raises(BudgetExhausted):
        runner.submit(ALICE, attempt.id, evaluation.id)
    with pytest.raises(BudgetExhausted):
        runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=9"))
    (row,) = runner.leaderboard(BOB)
    assert (row.agent, row.category, row.tasks, row.mean_speedup) == ("alice", "triton2triton", 1, 2.0)
    assert runner.leaderboard(BOB, "hip2hip") == ()


def test_a_failed_job_raises_its_error_and_refunds(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate(fail_with=NoDevice("no GPU for hip2hip"))
    runner = make_runner(repo, fake)
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    progress = runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"))
    with pytest.raises(NoDevice, match="no GPU"):
        list(progress)
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3
    fake.fail_with = RuntimeError("a bug in the runner")
    with pytest.raises(Exception, match="runner failed"):
        list(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2")))
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 3
    fake.fail_with = None
    assert final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=2"))).score.speedup == 2
    assert runner.get_attempt(ALICE, attempt.id).iterations_left == 2


def test_one_job_per_lane_and_the_lane_picks_the_device(repo: Path, make_runner, kit) -> None:
    seen_devices: list[int] = []
    fake = kit.FakeEvaluate(delay_s=0.05)

    def evaluate(task, candidate, repo_root, settings, store):
        seen_devices.append(settings.device)
        return fake(task, candidate, repo_root, settings, store)

    from arena.harness.settings import HarnessSettings

    runner = make_runner(repo, evaluate, lanes=("0", "1"), settings=HarnessSettings())
    streams = [runner.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(6)]
    results = [final(stream) for stream in streams]
    assert sorted(e.score.speedup for e in results) == [1, 2, 3, 4, 5, 6]
    assert fake.most_running <= 2 and set(seen_devices) <= {0, 1}


def test_queue_position_is_reported(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate(delay_s=0.2))
    streams = [runner.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(3)]
    steps = list(streams[2])
    assert steps[0].stage == "queued" and steps[0].queue_position >= 1
    assert [s.stage for s in steps][-2:] == ["running", "done"]


def test_a_restart_finishes_every_accepted_job(tmp_path: Path, kit) -> None:
    repo = kit.write_repo(tmp_path / "repo")
    state = tmp_path / "state"
    slow = kit.FakeEvaluate(delay_s=0.3)
    first = Runner(repo, state, slow, tasks=load_tasks(repo)).start()
    with pytest.raises(StateBusy):
        Runner(repo, state, slow, tasks=load_tasks(repo))
    streams = [first.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(5)]
    ids = [next(iter(stream)).evaluation_id for stream in streams]
    deadline = time.monotonic() + 5
    while not slow.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    first.stop(timeout_s=0.05)  # the first job is mid-run: it stays 'running' on disk
    fast = kit.FakeEvaluate()
    second = Runner(repo, state, fast, tasks=load_tasks(repo)).start()
    try:
        done = [final(second._queue.watch(job)) for job in ids]
        assert [e.id for e in done] == ids
        assert sorted(e.score.speedup for e in done) == [1, 2, 3, 4, 5]
        # The job interrupted mid-run is run again; every other job runs once.
        assert len(slow.calls) == 1 and len(fast.calls) == 5 and slow.calls[0] in fast.calls
    finally:
        second.stop(timeout_s=2)
    time.sleep(0.35)  # the first runner's last job ends against a closed database, silently


def test_concurrent_evaluations_count_exactly(repo: Path, make_runner, kit) -> None:
    fake = kit.FakeEvaluate(delay_s=0.001)
    runner = make_runner(repo, fake, lanes=("0", "1"))
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    outcomes: list[str] = []
    lock = threading.Lock()

    def send(i: int) -> None:
        try:
            final(runner.evaluate(ALICE, attempt.id, kit.candidate(f"speedup={i + 1}")))
            outcome = "ok"
        except BudgetExhausted:
            outcome = "refused"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 9
    assert len(fake.calls) == 3


def test_following_stops_when_the_caller_hangs_up(repo: Path, make_runner, kit) -> None:
    runner = make_runner(repo, kit.FakeEvaluate(delay_s=0.8))
    active = [True]
    stream = runner.evaluate(OPS, "", kit.candidate("speedup=2"), lambda: active[0])
    first = next(stream)
    assert first.stage in ("queued", "running")
    active[0] = False
    started = time.monotonic()
    assert list(stream) == []
    assert time.monotonic() - started < 0.7
    # The job itself runs on and is recorded.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            assert runner.get_evaluation(OPS, first.evaluation_id).score.speedup == 2
            return
        except NotReady:
            time.sleep(0.05)
    raise AssertionError("the evaluation never finished")


def test_the_real_pipeline_through_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One evaluation with arena.evaluation.evaluate (the harness, Triton's interpreter on CPU)."""
    from arena.harness.settings import HarnessSettings
    from arena.runner.runner import open_runner

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    repo = write_scale_repo(tmp_path / "repo", iterations=2)
    settings = HarnessSettings(backend="cpu", timeout_s=240)
    runner = open_runner(repo, tmp_path / "state", lanes=("cpu",), settings=settings, durable=False)
    try:
        address = SCALE_ADDRESS
        attempt = runner.open_attempt(ALICE, address)
        good = Candidate(address, {"kernel.py": SCALE_KERNEL.encode()})
        wrong = Candidate(address, {"kernel.py": WRONG_KERNEL.encode()})
        passed = final(runner.evaluate(ALICE, attempt.id, good))
        assert passed.compiled and passed.correct, passed.errors
        assert final(runner.evaluate(OPS, "", good)).cached  # a second job, answered by the score cache
        failed = final(runner.evaluate(ALICE, attempt.id, wrong))
        assert failed.compiled and not failed.correct and failed.status.value == "INCORRECT"
        assert runner.submit(ALICE, attempt.id, passed.id).final_evaluation == passed.id
    finally:
        runner.stop(timeout_s=5)


def test_a_changed_task_makes_the_same_candidate_a_new_job() -> None:
    # Job ids dedupe retries; they must not answer a candidate from before its task changed.
    candidate = Candidate("tasks/t/a:a", {"kernel.py": b"x"})
    assert job_id("alice", "att", candidate, "digest-1") == job_id("alice", "att", candidate, "digest-1")
    assert job_id("alice", "att", candidate, "digest-1") != job_id("alice", "att", candidate, "digest-2")


class _Executor:
    """Just enough of an Executor for the isolation rule (the fake evaluate never calls run)."""

    def __init__(self, isolation: str) -> None:
        self._isolation = isolation

    def run(self, *args: object) -> None:
        raise AssertionError("not called by the fake evaluate")

    def describe(self) -> dict[str, str]:
        return {"executor": "fake"}

    def isolation(self) -> str:
        return self._isolation

    def environment(self, base):  # type: ignore[no-untyped-def]
        return base


def _evaluate_with(fake):  # type: ignore[no-untyped-def]
    """The fake evaluate, taking the executor's run and environment as the real one does."""
    return lambda task, candidate, repo_root, settings, store, **_: fake(task, candidate, repo_root, settings, store)


def test_agents_candidates_need_isolation_unless_the_operator_allows_none(repo: Path, make_runner, kit) -> None:
    bare = make_runner(repo, _evaluate_with(kit.FakeEvaluate()), executor=_Executor(""), require_isolation=True)
    attempt = bare.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(Unisolated, match="no sandbox"):
        list(bare.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.5")))
    assert bare.get_attempt(ALICE, attempt.id).iterations_left == attempt.iterations_left  # nothing spent
    assert final(bare.evaluate(OPS, "", kit.candidate("speedup=1.5"))).correct  # an operator's own run


def test_a_sandboxed_or_allowed_runner_takes_agents_candidates(repo: Path, tmp_path: Path, kit) -> None:
    for executor, required in ((_Executor("bwrap 0.8.0"), True), (_Executor(""), False)):
        runner = Runner(
            repo, tmp_path / f"state-{required}", _evaluate_with(kit.FakeEvaluate()), tasks=load_tasks(repo), durable=False,
            executor=executor, require_isolation=required,  # type: ignore[arg-type]
        ).start()
        try:
            attempt = runner.open_attempt(ALICE, SOFTMAX)
            assert final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.5"))).correct
        finally:
            runner.stop(timeout_s=2)
