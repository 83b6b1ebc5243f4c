"""The durable job queue (arena.runner.queue) on its own: jobs in SQLite, one worker per lane,
restart, failure and its refund hook, back-pressure. run_job is a stand-in: no harness runs."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from arena.candidate.candidate import Candidate
from arena.errors import InvalidCandidate, JobFailed, NotFound, NotReady, QueueFull
from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.database import Database
from arena.runner.queue import Job, JobQueue, RunJob, error_of
from arena_testing.waiting import WAIT_S, wait_until

TASK = "tasks/t/add:add"


def job(name: str, agent: str = "alice") -> Job:
    return Job(id=name, agent=agent, attempt="", candidate=Candidate(TASK, {"kernel.py": name.encode()}))


def evaluation(digest: str = "t") -> Evaluation:
    return Evaluation("from-run-job", TASK, digest, "c", Status.PASSED, True, True)


def passes(job: Job, lane: str) -> Evaluation:
    return evaluation()


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(tmp_path / "state" / "runner.db", durable=False)
    yield db
    db.close()


@pytest.fixture
def make_queue(database: Database) -> Iterator[Callable[..., JobQueue]]:
    """make_queue(run_job, **options) -> a JobQueue on the test's database (not started); stopped at the end."""
    queues: list[JobQueue] = []

    def make(run_job: RunJob = passes, **options: object) -> JobQueue:
        options.setdefault("lanes", ("0",))
        options.setdefault("poll_s", 0.05)
        queue = JobQueue(database, run_job=run_job, **options)  # type: ignore[arg-type]
        queues.append(queue)
        return queue

    yield make
    for queue in queues:
        queue.stop(timeout_s=2)


def add(database: Database, queue: JobQueue, *jobs: Job) -> None:
    """Enqueue `jobs` in one transaction, as the runner does, then wake the workers."""
    with database.transaction() as conn:
        for item in jobs:
            queue.enqueue(conn, item, now_ms=1)
    queue.wake()


def wait_for(queue: JobQueue, job_id: str, state: str) -> Job:
    def reached() -> Job | None:
        found = queue.read(job_id)
        return found if found.state == state else None

    return wait_until(reached, f"job {job_id} to be {state}")


def test_an_enqueued_job_is_on_disk_pending_with_its_candidate(database: Database, make_queue) -> None:
    queue = make_queue()
    add(database, queue, job("j1", agent="bob"))
    with database.reading() as conn:
        found = queue.find(conn, "j1")
        assert queue.find(conn, "nothing") is None
    assert found is not None
    assert (found.state, found.agent, found.lane, found.evaluation) == ("pending", "bob", "", None)
    assert found.candidate == job("j1").candidate and found.candidate.digest == job("j1").candidate.digest
    with pytest.raises(NotFound):
        queue.read("nothing")


def test_the_same_job_id_is_never_queued_twice(database: Database, make_queue) -> None:
    queue = make_queue()
    add(database, queue, job("j1"))
    with pytest.raises(sqlite3.IntegrityError):
        add(database, queue, job("j1"))


def test_waiting_jobs_report_their_place_in_the_queue(database: Database, make_queue) -> None:
    queue = make_queue()  # not started: nothing runs
    add(database, queue, job("a"), job("b"), job("c"))
    places = [next(queue.watch(name)) for name in ("a", "b", "c")]
    assert [(p.stage, p.queue_position) for p in places] == [("queued", 0), ("queued", 1), ("queued", 2)]


def test_a_job_runs_and_its_watcher_sees_it_done_under_the_jobs_id(database: Database, make_queue) -> None:
    queue = make_queue(lanes=("gpu3",))
    queue.start()
    add(database, queue, job("j1"))
    steps = list(queue.watch("j1"))
    assert steps[-1].stage == "done" and {s.stage for s in steps} <= {"queued", "running", "done"}
    assert steps[-1].evaluation is not None and steps[-1].evaluation.id == "j1"  # not run_job's id
    done = queue.read("j1")
    assert (done.state, done.lane) == ("done", "gpu3")
    assert done.evaluation == steps[-1].evaluation


def test_a_watcher_that_hung_up_stops_within_a_poll(database: Database, make_queue) -> None:
    queue = make_queue(poll_s=0.05)  # not started: the job never changes
    add(database, queue, job("j1"))
    asked: list[bool] = []

    def hung_up() -> bool:
        asked.append(False)
        return False

    # It ends though nothing changed: after one wait of poll_s it asked, and stopped following.
    assert [p.stage for p in queue.watch("j1", is_active=hung_up)] == ["queued"]
    assert len(asked) == 1


def test_a_stopping_queue_tells_its_watchers_to_come_back(database: Database, make_queue) -> None:
    queue = make_queue()
    add(database, queue, job("j1"))
    watching = queue.watch("j1")
    assert next(watching).stage == "queued"
    queue.stop()
    with pytest.raises(NotReady, match="resumes when it restarts"):
        next(watching)


def test_a_restart_runs_the_jobs_a_dead_process_left_running(tmp_path: Path) -> None:
    path = tmp_path / "state" / "runner.db"
    first = Database(path, durable=False)
    add(first, JobQueue(first, ("0",), passes), job("j1"), job("j2"))
    with first.transaction() as conn:  # a process that claimed j1, then died
        conn.execute("UPDATE jobs SET state = 'running', claim = 'dead', lane = '0' WHERE id = 'j1'")
    first.close()

    ran: list[str] = []

    def run(job: Job, lane: str) -> Evaluation:
        ran.append(job.id)
        return evaluation()

    second = Database(path, durable=False)
    queue = JobQueue(second, ("0",), run, poll_s=0.05)
    try:
        queue.start()
        assert wait_for(queue, "j1", "done").evaluation is not None
        assert wait_for(queue, "j2", "done").evaluation is not None
        assert sorted(ran) == ["j1", "j2"]
    finally:
        queue.stop()
        second.close()


def test_a_late_result_from_before_a_restart_does_not_overwrite_the_rerun(database: Database, make_queue) -> None:
    release = threading.Event()

    def stuck(job: Job, lane: str) -> Evaluation:
        release.wait(WAIT_S)
        return evaluation("stale")

    old = make_queue(stuck, lanes=("old",))
    old.start()
    old_worker = next(t for t in threading.enumerate() if t.name == "arena-lane-old")
    add(database, old, job("j1"))
    wait_for(old, "j1", "running")
    old.stop(timeout_s=0.1)  # its worker is still inside run_job: j1 stays running on disk
    assert old.read("j1").state == "running"

    def rerun(job: Job, lane: str) -> Evaluation:
        release.set()  # the old worker returns now, while the rerun holds the job...
        old_worker.join(WAIT_S)  # ...and tries to record its stale result before the rerun's
        return evaluation("fresh")

    new = make_queue(rerun, lanes=("new",))
    new.start()  # takes j1 back and runs it again
    done = wait_for(new, "j1", "done")
    assert not old_worker.is_alive()
    assert done.evaluation is not None and done.evaluation.task_digest == "fresh"
    assert done.lane == "new"


def test_each_lane_runs_one_job_at_a_time_and_the_lanes_run_side_by_side(database: Database, make_queue) -> None:
    lock, running, overlaps, lanes_used = threading.Lock(), set(), [], []
    both_lanes = threading.Barrier(2, timeout=WAIT_S)  # passes only when two jobs run at once

    def run(job: Job, lane: str) -> Evaluation:
        with lock:
            overlaps.append(lane in running)
            running.add(lane)
            lanes_used.append(lane)
        try:
            if job.id in ("j1", "j2"):
                both_lanes.wait()
            time.sleep(0.02)
            return evaluation()
        finally:
            with lock:
                running.discard(lane)

    queue = make_queue(run, lanes=("a", "b"))
    queue.start()
    add(database, queue, *(job(f"j{i}") for i in range(1, 7)))
    for i in range(1, 7):
        wait_for(queue, f"j{i}", "done")
    assert not any(overlaps)  # a lane never started a job while its previous one ran
    assert sorted(set(lanes_used)) == ["a", "b"]
    assert {queue.read(name).lane for name in ("j1", "j2")} == {"a", "b"}


def test_a_failed_job_raises_its_error_to_watchers_and_calls_the_refund_hook(database: Database, make_queue) -> None:
    refunded: list[tuple[str, bool]] = []

    def refuse(job: Job, lane: str) -> Evaluation:
        raise InvalidCandidate("kernel.py is not allowed")

    def on_failure(conn: sqlite3.Connection, job: Job) -> None:
        refunded.append((job.id, conn.in_transaction))  # inside the transaction that fails the job

    queue = make_queue(refuse, on_failure=on_failure)
    queue.start()
    add(database, queue, job("j1"))
    with pytest.raises(InvalidCandidate, match="kernel.py is not allowed"):
        list(queue.watch("j1"))
    failed = queue.read("j1")
    assert (failed.state, failed.error_kind, failed.error) == ("failed", "InvalidCandidate", "kernel.py is not allowed")
    assert refunded == [("j1", True)]


def test_a_fault_of_the_runner_fails_the_job_without_its_details(database: Database, make_queue) -> None:
    refunded: list[str] = []

    def broken(job: Job, lane: str) -> Evaluation:
        raise KeyError("/srv/secret/path")

    queue = make_queue(broken, on_failure=lambda conn, j: refunded.append(j.id))
    queue.start()
    add(database, queue, job("j1"))
    with pytest.raises(JobFailed) as caught:
        list(queue.watch("j1"))
    assert "secret" not in str(caught.value) and queue.read("j1").error_kind == "JobFailed"
    assert refunded == ["j1"]


def test_a_success_calls_no_refund_hook(database: Database, make_queue) -> None:
    refunded: list[str] = []
    queue = make_queue(on_failure=lambda conn, j: refunded.append(j.id))
    queue.start()
    add(database, queue, job("j1"))
    assert list(queue.watch("j1"))[-1].stage == "done"
    assert refunded == []


def test_a_failed_job_may_be_queued_again_and_then_runs(database: Database, make_queue) -> None:
    outcomes = iter([InvalidCandidate("first try"), None])

    def flaky(job: Job, lane: str) -> Evaluation:
        error = next(outcomes)
        if error is not None:
            raise error
        return evaluation()

    queue = make_queue(flaky)
    queue.start()
    add(database, queue, job("j1"))
    wait_for(queue, "j1", "failed")
    add(database, queue, job("j1"))  # a retry replaces the failed job
    assert wait_for(queue, "j1", "done").error == ""


def test_a_full_queue_refuses_more_and_keeps_what_it_holds(database: Database, make_queue) -> None:
    queue = make_queue(max_pending=2)  # not started: everything stays pending
    add(database, queue, job("a"), job("b"))
    with pytest.raises(QueueFull, match="2 pending"):
        add(database, queue, job("c"))
    with database.reading() as conn:
        assert [row["id"] for row in conn.execute("SELECT id FROM jobs ORDER BY seq")] == ["a", "b"]


def test_an_unknown_error_kind_reads_back_as_job_failed() -> None:
    assert isinstance(error_of("InvalidCandidate", "bad path"), InvalidCandidate)
    for kind in ("NoSuchError", "ValueError", ""):  # not an ArenaError: never raised as itself
        error = error_of(kind, "")
        assert type(error) is JobFailed and "failed to evaluate" in str(error)


def test_a_long_job_sends_heartbeats_and_every_job_is_logged(
    database: Database, make_queue, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    def slow(job: Job, lane: str) -> Evaluation:
        release.wait(WAIT_S)
        return evaluation()

    queue = make_queue(slow, heartbeat_s=0.1)
    queue.start()
    add(database, queue, job("long"))
    caplog.set_level("INFO", logger="arena.runner.queue")
    stages = []
    for step in queue.watch("long"):
        stages.append(step.stage)
        if stages.count("running") == 4:  # three heartbeats after the first "running"
            release.set()
    assert stages.count("running") >= 4 and stages[-1] == "done"
    text = caplog.text
    assert "job started: job=long agent=alice" in text and "kind=scored lane=0 run=1" in text
    assert "job done: job=long agent=alice status=PASSED" in text
