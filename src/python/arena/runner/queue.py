"""A durable evaluation queue: jobs live in SQLite, one worker thread per device lane.

A job is accepted by a committed INSERT before the caller replies, so a restart loses none:
`start` returns jobs left running by a dead process to pending and the workers pick them up.
A job's id is derived from its content by the caller, so the same request never makes two jobs.
Each lane runs one job at a time: one timing job per GPU. A job that ends in a fault of the
runner (is_fault) goes back to the queue, up to max_tries runs in all, before it fails.
A job answered without running (a score already cached) is recorded done at once (record_done).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Iterator

from arena import errors
from arena.candidate.candidate import Candidate, candidate_from_json, candidate_to_json
from arena.errors import ArenaError, JobFailed, NotFound, NotReady, QueueFull, Throttled
from arena.evaluation.evaluation import Evaluation
from arena.runner.database import Database
from arena.runner.quoting import cut, quote
from arena.runner.records import Progress

log = logging.getLogger(__name__)
HEARTBEAT_S = 10.0  # a followed job's stage is sent again after this long without a change
# Every column of a job but its candidate's files (Job.candidate then holds none).
WITHOUT_FILES = (
    "seq, id, agent, attempt, task, '' AS candidate, state, claim, lane, evaluation, error_kind, error,"
    " created_ms, finished_ms, tries, kind"
)


@dataclass(frozen=True)
class Job:
    """One evaluation to run; its id is also the id of the evaluation it produces."""

    id: str
    agent: str
    attempt: str  # '' outside any attempt
    candidate: Candidate
    state: str = "pending"  # pending | running | done | failed
    seq: int = 0  # queue order
    lane: str = ""  # the lane that ran it
    evaluation: Evaluation | None = None  # set once done
    error_kind: str = ""  # the ArenaError subclass once failed
    error: str = ""
    tries: int = 0  # runs that ended in a fault of the runner
    check: bool = False  # a free check: compile and the declared cases, never timed or scored
    final: bool = False  # the runner's evaluation of an attempt's workspace (Finalize), never charged
    rerun: bool = False  # a finished evaluation's candidate run again past the score cache (Reproduce)


# run_job(job, lane) -> the Evaluation; raising ArenaError fails the job with that error.
RunJob = Callable[[Job, str], Evaluation]
# is_fault(error) -> True when `error` is the runner's or the machine's fault, worth running the job again.
IsFault = Callable[[BaseException], bool]
# on_failure(conn, job) runs in the transaction that marks a job failed (e.g. to refund a budget).
OnFailure = Callable[[sqlite3.Connection, Job], None]
OnDone = Callable[[sqlite3.Connection, Job, Evaluation], None]


# A pending job's turn: how many of its agent's earlier jobs wait, run, or ran since it was queued.
# Jobs run by turn, then in queue order, so an agent with none of its own running or waiting ahead
# goes next: one agent's backlog (up to max_pending_per_agent) delays another's job by about one
# job, not by all of them (queue_share_test).
# Two counts, each on an index (jobs_by_state; jobs_by_agent_finish): the waiting and running jobs
# are few, and of an agent's history only what finished since `j` was queued is read.
TURN = (
    "((SELECT COUNT(*) FROM jobs mine WHERE mine.state IN ('pending', 'running')"
    " AND mine.agent = j.agent AND mine.seq < j.seq)"
    " + (SELECT COUNT(*) FROM jobs mine WHERE mine.agent = j.agent AND mine.finished_ms >= j.created_ms"
    " AND mine.state IN ('done', 'failed') AND mine.seq < j.seq))"
)
NEXT_JOB = f"SELECT * FROM jobs j WHERE state = 'pending' ORDER BY {TURN}, seq LIMIT 1"
# A waiting job's place in line (parameters: its id, its seq): the waiting jobs it comes after.
PLACE_IN_LINE = (
    f"SELECT COUNT(*) FROM (SELECT seq, {TURN} AS turn FROM jobs j WHERE state = 'pending') AS line,"
    f" (SELECT {TURN} AS turn FROM jobs j WHERE id = ?) AS own"
    " WHERE line.turn < own.turn OR (line.turn = own.turn AND line.seq < ?)"
)


class JobQueue:
    def __init__(
        self,
        database: Database,
        lanes: tuple[str, ...],
        run_job: RunJob,
        on_failure: OnFailure | None = None,
        on_done: OnDone | None = None,
        max_pending: int = 256,
        poll_s: float = 0.5,
        on_lane_start: Callable[[str], None] | None = None,
        is_fault: IsFault | None = None,
        max_tries: int = 1,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self._database = database
        self._heartbeat_s = heartbeat_s
        self._is_fault = is_fault or (lambda error: False)
        self._max_tries = max_tries
        self._on_lane_start = on_lane_start  # called on each worker's own thread before its first claim
        self._lanes = lanes
        self._run_job = run_job
        self._on_failure = on_failure
        self._on_done = on_done  # in the transaction that records a lane's evaluation
        self._max_pending = max_pending
        self._poll_s = poll_s
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._version = 0  # bumped on every state change, so waiters never miss one
        self._workers: list[threading.Thread] = []

    def start(self) -> None:
        """Requeue jobs a dead process left running, then start one worker per lane."""
        with self._database.transaction() as conn:
            conn.execute("UPDATE jobs SET state = 'pending', claim = '' WHERE state = 'running'")
        for lane in self._lanes:
            worker = threading.Thread(target=self._work, args=(lane,), name=f"arena-lane-{lane}", daemon=True)
            worker.start()
            self._workers.append(worker)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop taking jobs; a job still running stays 'running' on disk and is requeued by the next start."""
        self._stopping.set()
        self._notify()
        deadline = time.monotonic() + timeout_s
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))

    def find(self, conn: sqlite3.Connection, job_id: str, files: bool = True) -> Job | None:
        """The job `job_id`; without `files`, its candidate's files are left out (an empty map): what
        a lookup of its owner and state needs, without decoding up to 4 MiB under the state's lock."""
        columns = "*" if files else WITHOUT_FILES
        row = conn.execute(f"SELECT {columns} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else job_from_row(row)

    def read(self, job_id: str, files: bool = True) -> Job:
        with self._database.reading() as conn:
            job = self.find(conn, job_id, files)
        if job is None:
            raise NotFound(f"no evaluation {quote(job_id)}")
        return job

    def enqueue(self, conn: sqlite3.Connection, job: Job, now_ms: int, agent_share: int | None = None) -> None:
        """Add `job` (new, or a retry of a failed one) in the caller's transaction; `wake` after commit.
        `agent_share`: Throttled while its agent already has that many jobs pending."""
        (pending,) = conn.execute("SELECT COUNT(*) FROM jobs WHERE state = 'pending'").fetchone()
        if pending >= self._max_pending:
            raise QueueFull(f"the runner already holds {pending} pending evaluations; retry later")
        if agent_share is not None:
            (mine,) = conn.execute(
                "SELECT COUNT(*) FROM jobs WHERE state = 'pending' AND agent = ?", (job.agent,)
            ).fetchone()
            if mine >= agent_share:
                raise Throttled(
                    f"agent {job.agent!r} already has {mine} evaluations waiting in the queue, the most one agent "
                    f"may (max_pending_per_agent={agent_share}); send more once one has started"
                )
        conn.execute("DELETE FROM jobs WHERE id = ? AND state = 'failed'", (job.id,))
        conn.execute(
            "INSERT INTO jobs (id, agent, attempt, task, candidate, state, created_ms, kind)"
            " VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
            (job.id, job.agent, job.attempt, job.candidate.task, candidate_to_json(job.candidate), now_ms, _kind(job)),
        )

    def record_done(self, conn: sqlite3.Connection, job: Job, evaluation: Evaluation, now_ms: int) -> None:
        """Add `job` as already done with `evaluation` (it needs no lane), in the caller's transaction."""
        conn.execute("DELETE FROM jobs WHERE id = ? AND state = 'failed'", (job.id,))
        conn.execute(
            "INSERT INTO jobs (id, agent, attempt, task, candidate, state, evaluation, created_ms, finished_ms, kind)"
            " VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?)",
            (
                job.id,
                job.agent,
                job.attempt,
                job.candidate.task,
                candidate_to_json(job.candidate),
                json.dumps(replace(evaluation, id=job.id).to_dict()),
                now_ms,
                now_ms,
                _kind(job),
            ),
        )

    def wake(self) -> None:
        self._notify()

    def watch(self, job_id: str, is_active: Callable[[], bool] = lambda: True) -> Iterator[Progress]:
        """Progress of a job until it is done; a failed job raises its error.

        Ends early, within poll_s, once `is_active()` is false (the caller hung up), so a
        cancelled stream does not hold its thread until the job's next change.
        """
        last: Progress | None = None
        sent = time.monotonic()
        stopping = NotReady(f"the runner is stopping; evaluation {job_id} resumes when it restarts")
        while True:
            seen = self._version
            try:
                progress = self._progress(job_id)
            except sqlite3.ProgrammingError:  # the state was closed under us
                raise stopping if self._stopping.is_set() else RuntimeError("runner state closed") from None
            # A change, or the same stage again after heartbeat_s: a client waiting minutes for
            # one evaluation learns that the runner and its job are alive.
            if progress != last or time.monotonic() - sent >= self._heartbeat_s:
                yield progress
                last, sent = progress, time.monotonic()
            if progress.stage == "done":
                return
            if self._stopping.is_set():
                raise stopping
            self._wait_for_change(seen)
            if not is_active():
                return

    def _progress(self, job_id: str) -> Progress:
        with self._database.reading() as conn:
            row = conn.execute(
                "SELECT seq, state, evaluation, error_kind, error FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no evaluation {quote(job_id)}")
            if row["state"] == "pending":
                (ahead,) = conn.execute(PLACE_IN_LINE, (job_id, row["seq"])).fetchone()
                return Progress("queued", job_id, queue_position=ahead)
        if row["state"] == "running":
            return Progress("running", job_id)
        if row["state"] == "done":
            return Progress("done", job_id, evaluation=Evaluation.from_dict(json.loads(row["evaluation"])))
        raise error_of(row["error_kind"], row["error"])

    def _wait_for_change(self, seen: int) -> None:
        """Until a state change after version `seen` (or stop), at most poll_s."""
        with self._changed:
            self._changed.wait_for(partial(self._changed_since, seen), self._poll_s)

    def _changed_since(self, seen: int) -> bool:
        return self._version != seen or self._stopping.is_set()

    def _notify(self) -> None:
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def _work(self, lane: str) -> None:
        if self._on_lane_start is not None:
            try:
                self._on_lane_start(lane)
            except Exception:  # noqa: BLE001 - preparing is an optimisation; the lane still runs
                log.exception("preparing lane %s failed", lane)
        try:
            while not self._stopping.is_set():
                self._work_once(lane)
        except sqlite3.ProgrammingError:
            if not self._stopping.is_set():  # a closed database is expected only while stopping
                raise

    def _work_once(self, lane: str) -> None:
        seen = self._version
        claimed = self._claim(lane)
        if claimed is None:
            self._wait_for_change(seen)
            return
        job, claim = claimed
        self._notify()
        began = time.monotonic()
        log.info(
            "job started: job=%s agent=%s task=%s kind=%s lane=%s run=%d",
            job.id,
            job.agent,
            job.candidate.task,
            _kind(job),
            lane,
            job.tries + 1,
        )
        try:
            evaluation = replace(self._run_job(job, lane), id=job.id)
        except Exception as error:  # the worker's edge: a fault of the runner, never of the candidate
            if isinstance(error, ArenaError):
                kind, message = type(error).__name__, cut(str(error))
            else:
                log.exception("evaluating job %s failed", job.id)
                kind, message = "JobFailed", "the runner failed to evaluate this candidate"
            if self._is_fault(error) and job.tries + 1 < self._max_tries:
                log.warning("job %s: run %d ended in a fault (%s); queued again", job.id, job.tries + 1, message)
                self._requeue(job, claim, kind, message)
            else:
                log.warning(
                    "job failed: job=%s agent=%s error=%s seconds=%.1f",
                    job.id,
                    job.agent,
                    kind,
                    time.monotonic() - began,
                )
                self._settle(job, claim, None, kind, message)
        else:
            log.info(
                "job done: job=%s agent=%s status=%s points=%.1f cached=%s seconds=%.1f",
                job.id,
                job.agent,
                evaluation.status.value,
                evaluation.score.points,
                evaluation.cached,
                time.monotonic() - began,
            )
            self._settle(job, claim, evaluation, "", "")
        self._notify()

    def _claim(self, lane: str) -> tuple[Job, str] | None:
        claim = uuid.uuid4().hex
        with self._database.transaction() as conn:
            row = conn.execute(NEXT_JOB).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE jobs SET state = 'running', claim = ?, lane = ? WHERE id = ?",
                (claim, lane, row["id"]),
            )
        return job_from_row(row), claim

    def _requeue(self, job: Job, claim: str, kind: str, message: str) -> None:
        """Back to pending (keeping its place in line) after a fault, unless a restart took it back."""
        with self._database.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'pending', claim = '', tries = tries + 1, error_kind = ?, error = ?"
                " WHERE id = ? AND claim = ? AND state = 'running'",
                (kind, message, job.id, claim),
            )

    def _settle(self, job: Job, claim: str, evaluation: Evaluation | None, kind: str, message: str) -> None:
        """Record a job's outcome, unless a restart took the job back meanwhile (its claim changed)."""
        state = "done" if evaluation is not None else "failed"
        text = json.dumps(evaluation.to_dict()) if evaluation is not None else ""
        with self._database.transaction() as conn:
            updated = conn.execute(
                "UPDATE jobs SET state = ?, evaluation = ?, error_kind = ?, error = ?,"
                " finished_ms = ?, claim = ''"
                " WHERE id = ? AND claim = ? AND state = 'running'",
                (state, text, kind, message, int(time.time() * 1000), job.id, claim),
            ).rowcount
            if updated and evaluation is None and self._on_failure is not None:
                self._on_failure(conn, job)
            if updated and evaluation is not None and self._on_done is not None:
                self._on_done(conn, job, evaluation)


def error_of(kind_name: str, message: str) -> ArenaError:
    """The exception a failed job raises to whoever watches it."""
    kind = getattr(errors, kind_name, None)
    if isinstance(kind, type) and issubclass(kind, ArenaError):
        return kind(message)
    return JobFailed(message or "the runner failed to evaluate this candidate")


def job_from_row(row: sqlite3.Row) -> Job:
    files = row["candidate"]  # '' where the lookup left the files out (WITHOUT_FILES)
    return Job(
        id=row["id"],
        agent=row["agent"],
        attempt=row["attempt"],
        candidate=candidate_from_json(files) if files else Candidate(task=row["task"], files={}),
        state=row["state"],
        seq=row["seq"],
        lane=row["lane"],
        evaluation=Evaluation.from_dict(json.loads(row["evaluation"])) if row["evaluation"] else None,
        error_kind=row["error_kind"],
        error=row["error"],
        tries=row["tries"],
        check=row["kind"] == "check",
        final=row["kind"] == "final",
        rerun=row["kind"] == "rerun",
    )


def _kind(job: Job) -> str:
    return "check" if job.check else "final" if job.final else "rerun" if job.rerun else "scored"
