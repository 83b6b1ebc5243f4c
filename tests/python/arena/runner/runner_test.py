"""The Runner's domain rules, without gRPC: budgets, idempotency, ownership, failures, restarts."""

from __future__ import annotations

import threading
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
from arena_testing.waiting import WAIT_S, wait_until

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
    assert all(kit.SECRET not in content and b"REFERENCE" not in content for content in view.baseline_files.values())
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
    devices: dict[float, int] = {}
    both_lanes = threading.Barrier(2, timeout=WAIT_S)  # passes only while the first two jobs run at once
    fake = kit.FakeEvaluate()

    def evaluate(task, candidate, repo_root, settings, store):
        speedup = kit.speedup_of(candidate)
        devices[speedup] = settings.device
        if speedup in (1, 2):  # the first two in line: one on each lane
            both_lanes.wait()
        return fake(task, candidate, repo_root, settings, store)

    from arena.harness.settings import HarnessSettings

    runner = make_runner(repo, evaluate, lanes=("0", "1"), settings=HarnessSettings())
    streams = [runner.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(6)]
    results = [final(stream) for stream in streams]
    assert sorted(e.score.speedup for e in results) == [1, 2, 3, 4, 5, 6]
    assert fake.most_running <= 2 and set(devices.values()) <= {0, 1}
    assert {devices[1], devices[2]} == {0, 1}  # side by side, each lane on its own device


def test_queue_position_is_reported(repo: Path, make_runner, kit) -> None:
    gate = threading.Semaphore(0)  # every job is held until the test lets it go
    runner = make_runner(repo, kit.FakeEvaluate(gate=gate))
    streams = [runner.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(3)]
    third = iter(streams[2])
    steps = [next(third)]
    assert steps[0].stage == "queued" and steps[0].queue_position >= 1
    gate.release(2)  # the two ahead of it finish; the third is held running
    while steps[-1].stage != "running":
        steps.append(next(third))
    gate.release()
    steps += list(third)
    assert [s.stage for s in steps][-2:] == ["running", "done"]


def test_a_restart_finishes_every_accepted_job(tmp_path: Path, kit) -> None:
    repo = kit.write_repo(tmp_path / "repo")
    state = tmp_path / "state"
    gate = threading.Semaphore(0)
    slow = kit.FakeEvaluate(gate=gate)  # its job is held mid-run until the test lets it go
    first = Runner(repo, state, slow, tasks=load_tasks(repo)).start()
    with pytest.raises(StateBusy):
        Runner(repo, state, slow, tasks=load_tasks(repo))
    streams = [first.evaluate(OPS, "", kit.candidate(f"speedup={i + 1}")) for i in range(5)]
    ids = [next(iter(stream)).evaluation_id for stream in streams]
    wait_until(lambda: slow.calls, "the first runner to start its first job")
    first_lanes = list(first._queue._workers)
    first.stop(timeout_s=0.05)  # the first job is held mid-run: it stays 'running' on disk
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
        gate.release()  # the first runner's held job ends now, against its closed database, silently
        for lane in first_lanes:
            lane.join(WAIT_S)
    assert not any(lane.is_alive() for lane in first_lanes)


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
        thread.join(WAIT_S)
    assert not any(thread.is_alive() for thread in threads)
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 9
    assert len(fake.calls) == 3


def test_following_stops_when_the_caller_hangs_up(repo: Path, make_runner, kit) -> None:
    gate = threading.Semaphore(0)
    runner = make_runner(repo, kit.FakeEvaluate(gate=gate))  # the job does not change until released
    active = [True]
    stream = runner.evaluate(OPS, "", kit.candidate("speedup=2"), lambda: active[0])
    first = next(stream)
    assert first.stage in ("queued", "running")
    active[0] = False
    assert list(stream) == []  # ended while its job is held: following never waited for the job
    gate.release()
    # The job itself runs on and is recorded.
    evaluation: Evaluation = wait_until(
        lambda: runner.get_evaluation(OPS, first.evaluation_id), "the evaluation to finish", ignoring=(NotReady,)
    )
    assert evaluation.score.speedup == 2


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
            repo,
            tmp_path / f"state-{required}",
            _evaluate_with(kit.FakeEvaluate()),
            tasks=load_tasks(repo),
            durable=False,
            executor=executor,  # type: ignore[arg-type]
            require_isolation=required,
        ).start()
        try:
            attempt = runner.open_attempt(ALICE, SOFTMAX)
            assert final(runner.evaluate(ALICE, attempt.id, kit.candidate("speedup=1.5"))).correct
        finally:
            runner.stop(timeout_s=2)
