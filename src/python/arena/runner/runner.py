"""The runner's domain object: tasks, attempts, the evaluation queue and the leaderboard.

It never imports grpc (service.py translates); every public method is one thing an agent asks.
A score already in the cache is answered in the Evaluate call itself, never behind device work;
an attempt its agent did not submit is closed by the runner's own evaluation of its files (finalize);
jobs that end in a fault of the runner or machine run again (max_tries) before they fail, and
their iterations come back only up to max_refunds per agent and task (attempts.py).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate, accept_candidate
from arena.environment.environment import Environment
from arena.environment.probe import probe_environment, probe_host, sandbox_tool
from arena.errors import (
    ArenaError,
    AttemptOpen,
    InvalidRequest,
    JobFailed,
    NotFound,
    NotReady,
    PermissionDenied,
    Unisolated,
    UnknownTask,
)
from arena.evaluation.evaluate import Store, evaluate, settings_for_machine, stored_evaluation
from arena.evaluation.evaluation import Evaluation, Status
from arena.executors.base import Executor, ExecutorError
from arena.harness.settings import HarnessSettings
from arena.harness.version import pin_sources
from arena.runner import accounting, attempts
from arena.runner.auth import Identity
from arena.runner.database import Database
from arena.runner.devices import CPU_LANE, discover_lanes, lane_cpus, lane_settings
from arena.runner.leaderboard import rank_submissions, read_submissions
from arena.runner.queue import Job, JobQueue, error_of
from arena.runner.quoting import quote
from arena.runner.records import Attempt, LeaderboardRow, Progress, TaskView, Usage
from arena.runner.task_view import view_task
from arena.task.digest import task_digest
from arena.task.load import load_tasks, parse_address
from arena.task.task import Task

# evaluate(task, candidate, repo_root, settings, store) -> Evaluation; tests inject a fast fake.
Evaluate = Callable[[Task, Candidate, Path, Any, Any], Evaluation]
# lookup(task, candidate, repo_root, settings, store, environment) -> the cached Evaluation or None.
# lookup(task, candidate, repo_root, settings, store, environment, task digest) -> the cached answer
Lookup = Callable[[Task, Candidate, Path, Any, Any, Environment, str], Evaluation | None]
STATE_FILE = "runner.sqlite"
log = logging.getLogger(__name__)
PIPELINE: Evaluate = evaluate  # the real pipeline, whose cache the runner may read before queueing
MAX_ATTEMPTS = 3  # attempts one agent may open on one task
MAX_REFUNDS = 3  # iterations one agent gets back per task for jobs the runner failed
MAX_TRIES = 3  # runs of a job whose runs end in a fault of the runner or machine
MAX_CHECKS = 30  # free checks per attempt (compile and declared cases; no iteration spent)
MAX_PENDING_PER_AGENT = 16  # an agent's jobs waiting at once: no agent can fill the queue or push the others back


def is_fault(error: BaseException) -> bool:
    """True for the runner's or the machine's faults (worth another run): a lost executor, a harness
    that left no verdict, a bug. Refusals that would recur (NoDevice, UnknownTask...) are not."""
    return isinstance(error, (ExecutorError, JobFailed)) or not isinstance(error, ArenaError)


def _check_limits(
    max_attempts: int, max_tries: int, max_refunds: int, max_checks: int, max_pending_per_agent: int
) -> None:
    """Refuse limits that would leave an agent no attempt, run or waiting job (ValueError)."""
    if max_attempts < 1 or max_tries < 1 or max_refunds < 0 or max_checks < 0 or max_pending_per_agent < 1:
        raise ValueError(
            f"max_attempts ({max_attempts}), max_tries ({max_tries}) and max_pending_per_agent "
            f"({max_pending_per_agent}) must be at least 1, "
            f"max_refunds ({max_refunds}) and max_checks ({max_checks}) at least 0"
        )


class Runner:
    def __init__(
        self,
        repo_root: Path,
        state_dir: Path,
        evaluate: Evaluate,
        settings: HarnessSettings | None = None,
        store: Store | None = None,
        lanes: tuple[str, ...] = (CPU_LANE,),
        tasks: tuple[Task, ...] | None = None,
        max_pending: int = 256,
        clock: Callable[[], float] = time.time,
        durable: bool = True,
        executor: Executor | None = None,
        require_isolation: bool = False,
        max_attempts: int = MAX_ATTEMPTS,
        max_refunds: int = MAX_REFUNDS,
        max_tries: int = MAX_TRIES,
        lookup: Lookup | None = None,
        max_checks: int = MAX_CHECKS,
        max_trajectory_bytes: int = accounting.MAX_TRAJECTORY_BYTES,
        max_pending_per_agent: int = MAX_PENDING_PER_AGENT,
    ) -> None:
        """`require_isolation`: refuse agents' candidates when the executor isolates nothing
        (Executor.isolation()); operators' own evaluations still run. `lookup` answers cached
        scores before the queue; by default the pipeline's own when `evaluate` is the pipeline's."""
        _check_limits(max_attempts, max_tries, max_refunds, max_checks, max_pending_per_agent)
        self.repo_root = repo_root
        self.lanes = lanes
        self._evaluate = evaluate
        self._settings = settings
        self._store = store
        self._clock = clock
        self._executor = executor  # None: evaluate's own run_harness on this host
        self._require_isolation = require_isolation
        self._max_attempts = max_attempts
        self._max_refunds = max_refunds
        self._max_checks = max_checks
        self._max_trajectory_bytes = max_trajectory_bytes
        self._max_pending_per_agent = max_pending_per_agent  # operators' jobs (a suite's) are not capped
        self._lookup = lookup if lookup is not None else stored_evaluation if evaluate is PIPELINE else None
        self._tasks = {task.address: task for task in (tasks if tasks is not None else load_tasks(repo_root))}
        self._views: dict[str, TaskView] = {}
        self._database = Database(state_dir / STATE_FILE, durable=durable)
        self._queue = self._open_queue(max_pending, max_tries)

    def _open_queue(self, max_pending: int, max_tries: int) -> JobQueue:
        """The queue of this runner's jobs, in its state, run on its lanes by _run_job."""
        return JobQueue(
            self._database,
            self.lanes,
            self._run_job,
            self._refund,
            on_done=self._unchecked,
            max_pending=max_pending,
            on_lane_start=getattr(self._executor, "prepare", None),  # e.g. start a lane's first child now
            is_fault=is_fault,
            max_tries=max_tries,
        )

    def isolation(self) -> str:
        """What isolates candidate code here: the executor's answer, or this host's OS sandbox."""
        return self._executor.isolation() if self._executor is not None else sandbox_tool()

    def start(self) -> Runner:
        pin_sources()  # every job checks the harness on disk is still the one pinned here
        self._queue.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the workers and close the state; jobs still running resume at the next start."""
        self._queue.stop(timeout_s)
        self._database.close()
        close = getattr(self._executor, "close", None)  # a local executor's waiting children
        if close is not None:
            close()

    def list_tasks(self, identity: Identity, category: str = "") -> tuple[TaskView, ...]:
        return tuple(self._view(task) for task in self._tasks.values() if category in ("", task.category.value))

    def get_task(self, identity: Identity, address: str) -> TaskView:
        return self._view(self.find_task(address))

    def open_attempt(self, identity: Identity, address: str) -> Attempt:
        task = self.find_task(address)
        with self._database.transaction() as conn:
            return self._as_seen(attempts.open_attempt(conn, identity.agent, task, self._now_ms(), self._max_attempts))

    def get_attempt(self, identity: Identity, attempt_id: str) -> Attempt:
        with self._database.reading() as conn:
            return self._as_seen(attempts.read_attempt(conn, attempt_id, identity.agent))

    def _as_seen(self, attempt: Attempt) -> Attempt:
        """The attempt with what this runner's limits leave of it (its rows hold only what was spent)."""
        return replace(attempt, checks_left=max(0, self._max_checks - attempt.checks_used))

    def evaluate(
        self,
        identity: Identity,
        attempt_id: str,
        candidate: Candidate,
        is_active: Callable[[], bool] = lambda: True,
        check: bool = False,
    ) -> Iterator[Progress]:
        """Accept the candidate (spending one iteration of the attempt), then follow its job.

        Refusals raise here, before anything streams. The same candidate sent again within an
        attempt is the same job: it is followed again and spends nothing. A score already cached
        is recorded done here, without entering a lane's queue. Following stops once
        `is_active()` is false (the caller hung up); the job itself runs on.

        `check`: a free check instead, as an agent's local test would be: compile and the declared
        cases, no hidden cases, no timing, no score. It spends no iteration; an attempt has
        max_checks of them, and one can never be submitted.
        """
        task = self.find_task(candidate.task)
        candidate = accept_candidate(task, candidate.files)
        self._check_may_evaluate(identity, attempt_id)
        job = Job(
            id=job_id(identity.agent, attempt_id, candidate, task_digest(task, self.repo_root), check),
            agent=identity.agent,
            attempt=attempt_id,
            candidate=candidate,
            check=check,
        )
        cached = self._cached(task, candidate, check)
        accepted = self._accept(identity, task, job, cached)
        if accepted and cached is not None:
            self._keep(candidate)
        if accepted:
            _log_accepted(job, task, cached)
        if cached is None:  # a job recorded done needs no lane
            self._queue.wake()
        return self._queue.watch(job.id, is_active)

    def _check_may_evaluate(self, identity: Identity, attempt_id: str) -> None:
        """Refuse an agent's candidate where nothing isolates it, and an agent's call outside an attempt."""
        if self._require_isolation and not identity.operator and not self.isolation():
            raise Unisolated(
                "this runner has no sandbox for candidate code (install bubblewrap, or use the docker or remote "
                "executor); its operator may allow running without one (arena serve --allow-unisolated)"
            )
        if not attempt_id and not identity.operator:
            raise PermissionDenied("evaluations outside an attempt are for operators; open an attempt first")

    def _accept(self, identity: Identity, task: Task, job: Job, cached: Evaluation | None) -> bool:
        """Charge the attempt and record `cached` as the job's answer, or queue the job, in one
        transaction. False where the same job is there already and has not failed: it spends nothing."""
        now_ms = self._now_ms()
        with self._database.transaction() as conn:
            existing = self._queue.find(conn, job.id, files=False)
            if existing is not None and existing.state != "failed":
                return False
            self._charge(conn, job, task, now_ms)
            if cached is not None:
                self._queue.record_done(conn, job, cached, now_ms)
                self._unchecked(conn, job, cached)
            else:
                share = None if identity.operator else self._max_pending_per_agent
                self._queue.enqueue(conn, job, now_ms, agent_share=share)
        return True

    def _charge(self, conn: sqlite3.Connection, job: Job, task: Task, now_ms: int) -> None:
        """Spend one of the attempt's free checks, or one of its iterations; nothing outside an attempt."""
        if job.attempt and job.check:
            attempts.charge_check(conn, job.attempt, job.agent, task.address, now_ms, self._max_checks)
        elif job.attempt:
            attempts.charge_attempt(conn, job.attempt, job.agent, task.address, now_ms)

    def submit(self, identity: Identity, attempt_id: str, evaluation_id: str) -> Attempt:
        """Close the attempt with one of its finished evaluations as the final one."""
        with self._database.transaction() as conn:
            attempts.read_attempt(conn, attempt_id, identity.agent)
            job = self._queue.find(conn, evaluation_id, files=False)
            if job is None or job.agent != identity.agent:
                raise NotFound(f"no evaluation {quote(evaluation_id)} of yours")
            if job.attempt != attempt_id:
                raise InvalidRequest(f"evaluation {quote(evaluation_id)} is not from attempt {quote(attempt_id)}")
            if job.state != "done":
                raise NotReady(f"evaluation {quote(evaluation_id)} has not finished")
            if job.check:
                raise InvalidRequest(
                    f"evaluation {quote(evaluation_id)} is a free check, never scored: submit a scored evaluation"
                )
            return self._as_seen(attempts.submit_attempt(conn, attempt_id, identity.agent, evaluation_id))

    def finalize(self, identity: Identity, attempt_id: str, candidate: Candidate, agent_ended: bool = False) -> Attempt:
        """Close an attempt its agent did not submit with the runner's own evaluation of `candidate`
        (the files its workspace holds): an operator's call, once the deadline passed or, with
        `agent_ended`, once the agent's process ended.

        The files go through the path of any scored candidate (its checks, the score cache, a lane,
        the sandbox) as a job of the attempt's agent marked final, and spend no iteration. The
        attempt is closed with it at once (finalized), so it counts as soon as the job is done;
        should the runner fail the job, the attempt is open to Finalize again (reopen_finalized).
        An attempt already submitted is returned as it is.
        """
        if not identity.operator:
            raise PermissionDenied("Finalize is for operators; an agent submits one of its own evaluations")
        with self._database.reading() as conn:
            attempt = attempts.find_attempt(conn, attempt_id)
        if attempt.submitted:
            return self._as_seen(attempt)
        if self._now_ms() < attempt.deadline_unix_ms and not agent_ended:
            raise AttemptOpen(
                f"attempt {quote(attempt_id)} runs until its deadline and its agent was not said to have ended; "
                "finalize it after the deadline, or once its agent process ended"
            )
        task = self.find_task(attempt.task)
        if candidate.task and self.find_task(candidate.task).address != task.address:
            raise InvalidRequest(
                f"attempt {quote(attempt_id)} is for {task.address}, the candidate for {quote(candidate.task)}"
            )
        candidate = accept_candidate(task, candidate.files)
        # Another agent's files are as untrusted as its Evaluate calls; an operator's own attempt is as its own.
        if self._require_isolation and attempt.agent != identity.agent and not self.isolation():
            raise Unisolated("this runner has no sandbox for candidate code; it cannot evaluate an agent's files")
        return self._as_seen(self._submit_final(attempt, task, candidate))

    def _submit_final(self, attempt: Attempt, task: Task, candidate: Candidate) -> Attempt:
        """Queue (or answer from the cache) the final job of `candidate` and close the attempt with it."""
        attempt_id = attempt.id
        job = Job(
            id=job_id(attempt.agent, attempt_id, candidate, self._view(task).digest, final=True),
            agent=attempt.agent,
            attempt=attempt_id,
            candidate=candidate,
            final=True,
        )
        cached = self._cached(task, candidate)
        with self._database.transaction() as conn:
            attempt = attempts.find_attempt(conn, attempt_id)
            if attempt.submitted:  # its agent submitted meanwhile
                return attempt
            existing = self._queue.find(conn, job.id, files=False)
            answered = existing is None or existing.state == "failed"
            if answered and cached is not None:
                self._queue.record_done(conn, job, cached, self._now_ms())
            elif answered:
                self._queue.enqueue(conn, job, self._now_ms())
            attempt = attempts.finalize_attempt(conn, attempt_id, job.id)
        if answered and cached is not None:
            self._keep(candidate)
        log.info(
            "attempt finalized: attempt=%s agent=%s job=%s answer=%s",
            attempt_id,
            attempt.agent,
            job.id,
            "cache" if cached is not None else "queued",
        )
        self._queue.wake()
        return attempt

    def record_usage(self, identity: Identity, attempt_id: str, usage: Usage, name: str, trajectory: bytes) -> None:
        """Store what the attempt's agent spent and its event stream (`trajectory`, gzip-compressed;
        empty: none), replacing any recorded before: an operator's call."""
        if not identity.operator:
            raise PermissionDenied("RecordUsage is for operators; an agent's spending is recorded by whoever ran it")
        accounting.check_usage(usage)
        accounting.check_trajectory_name(name)
        size = accounting.trajectory_size(trajectory, self._max_trajectory_bytes) if trajectory else 0
        with self._database.transaction() as conn:
            attempts.find_attempt(conn, attempt_id)
            accounting.record_usage(conn, attempt_id, usage, name, trajectory, size, self._now_ms())

    def trajectory(self, identity: Identity, attempt_id: str) -> tuple[str, bytes]:
        """(name, gzip-compressed content) of the attempt's trajectory, for its agent or an operator."""
        with self._database.reading() as conn:
            attempt = attempts.find_attempt(conn, attempt_id)
            if attempt.agent != identity.agent and not identity.operator:
                raise PermissionDenied(f"attempt {quote(attempt_id)} belongs to another agent")
            return accounting.read_trajectory(conn, attempt_id)

    def get_evaluation(self, identity: Identity, evaluation_id: str) -> Evaluation:
        job = self._queue.read(evaluation_id, files=False)
        if job.agent != identity.agent and not identity.operator:
            raise PermissionDenied(f"evaluation {quote(evaluation_id)} belongs to another agent")
        if job.state == "failed":
            raise error_of(job.error_kind, job.error)
        if job.evaluation is None:
            raise NotReady(f"evaluation {quote(evaluation_id)} is {job.state}; ask again later")
        return job.evaluation

    def reproduce(
        self, identity: Identity, evaluation_id: str, request_id: str = "", is_active: Callable[[], bool] = lambda: True
    ) -> Iterator[Progress]:
        """Run a finished evaluation's candidate again, past the score cache, as a new job of this
        operator (no attempt; it enters no leaderboard): what `arena reproduce ID --runner` compares
        with the stored one. Refused for a task changed since (its digest) and for a free check
        (nothing scored). The same `request_id` sent again follows the same run (a retried call);
        empty: every call runs anew."""
        if not identity.operator:
            raise PermissionDenied("Reproduce is for operators: a re-run takes a lane like any evaluation")
        stored = self.get_evaluation(identity, evaluation_id)  # NotFound, NotReady, or the job's error
        original = self._queue.read(evaluation_id)
        if original.check:
            raise InvalidRequest(
                f"evaluation {quote(evaluation_id)} is a free check, never scored: reproduce a scored one"
            )
        task = self.find_task(original.candidate.task)
        digest = self._view(task).digest
        if stored.task_digest != digest:
            raise InvalidRequest(
                f"the task {task.address} changed since evaluation {quote(evaluation_id)} (digest "
                f"{stored.task_digest[:12]} then, {digest[:12]} now): a re-run would measure another task"
            )
        if self._require_isolation and original.agent != identity.agent and not self.isolation():
            raise Unisolated("this runner has no sandbox for candidate code; it cannot run an agent's files again")
        nonce = request_id or uuid.uuid4().hex
        job = Job(
            id=hashlib.sha256("\0".join((identity.agent, "rerun", original.id, nonce)).encode()).hexdigest()[:32],
            agent=identity.agent,
            attempt="",
            candidate=original.candidate,
            rerun=True,
        )
        with self._database.transaction() as conn:
            existing = self._queue.find(conn, job.id, files=False)
            if existing is None or existing.state == "failed":
                self._queue.enqueue(conn, job, self._now_ms())
        log.info(
            "job accepted: job=%s agent=%s task=%s kind=rerun of=%s", job.id, identity.agent, task.address, original.id
        )
        self._queue.wake()
        return self._queue.watch(job.id, is_active)

    def leaderboard(self, identity: Identity, category: str = "") -> tuple[LeaderboardRow, ...]:
        with self._database.reading() as conn:
            return rank_submissions(read_submissions(conn, category, self._now_ms()))

    def find_task(self, address: str) -> Task:
        if address in self._tasks:
            return self._tasks[address]
        folder, name = parse_address(address)  # raises UnknownTask for what is no task address
        task = self._tasks.get(f"{folder}:{name}")
        if task is None:
            raise UnknownTask(f"no task at {quote(address)}")
        return task

    def _view(self, task: Task) -> TaskView:
        # Baseline files and digests are read once: tasks are fixed while the runner runs.
        if task.address not in self._views:
            self._views[task.address] = view_task(task, self.repo_root, task_digest(task, self.repo_root))
        return self._views[task.address]

    def _settings_for(self, task: Task, lane: str, check: bool = False) -> HarnessSettings | None:
        settings = self._settings
        if settings is not None:
            settings = lane_settings(settings, lane)  # the GPU it pins, or the cpu backend
        if settings is not None and task.timeout is not None:
            settings = replace(settings, timeout_s=task.timeout)  # the task's own harness timeout
        if settings is not None and check:
            settings = replace(settings, check_only=True, hidden_seeds=0)  # what an agent may run itself
        if settings is not None:
            # As the CLI does: a lane without a GPU checks the untimed cases only (the interpreter
            # would spend many minutes on the timed ones); the suite says what needed a GPU.
            settings = settings_for_machine(task, settings, self._environment())
        return settings

    def _cached(self, task: Task, candidate: Candidate, check: bool = False) -> Evaluation | None:
        """The score cache's answer for `candidate`, as a lane would find it (the lane's device is
        not part of the cache key; its backend is, and every lane of a runner has the same), or None."""
        settings = self._settings_for(task, self.lanes[0], check)
        if self._lookup is None or settings is None or self._store is None:
            return None
        environment = self._environment()
        # The view's digest, read once: hashing the task's files on every hit cost more than the
        # lookup (bench/results/2026-11-30.md, "Runner under concurrent agents: cached Evaluate").
        digest = self._view(task).digest
        unkept = Unkept(self._store)  # the call may yet be refused: it must write nothing (Unkept)
        return self._lookup(task, candidate, self.repo_root, settings, unkept, environment, digest)

    def _keep(self, candidate: Candidate) -> None:
        """Keep an accepted cache hit's files, as evaluate() keeps those it runs (arena reproduce)."""
        if self._store is not None:
            self._store.keep(candidate)

    def _run_job(self, job: Job, lane: str) -> Evaluation:
        task = self.find_task(job.candidate.task)
        settings = self._settings_for(task, lane, job.check)
        store = None if job.rerun else self._store  # a re-run is measured afresh: no cache answers or keeps it
        if self._executor is None:
            return self._evaluate(task, job.candidate, self.repo_root, settings, store)
        return self._evaluate(
            task,
            job.candidate,
            self.repo_root,
            settings,
            store,
            runner=self._executor.run,  # type: ignore[call-arg]
            environment=self._environment(),
        )

    def _environment(self) -> Environment:
        """What this runner's evaluations record: this host and its measurement environment, or,
        where an executor measures elsewhere (an image, a pool), this host's GPU under the
        executor's own record: the host then needs no torch of its own."""
        if self._executor is None:
            return probe_environment()
        if self._executor.describe().get("executor") == "local":
            return self._executor.environment(probe_environment())
        return self._executor.environment(probe_host())

    def _unchecked(self, conn: sqlite3.Connection, job: Job, evaluation: Evaluation) -> None:
        """A scored job that could not be checked here (NEEDS_DEVICE) costs a check, not an iteration."""
        if job.attempt and not job.check and not job.final and evaluation.status is Status.NEEDS_DEVICE:
            attempts.unchecked_as_check(conn, job.attempt, self._max_checks)

    def _refund(self, conn: sqlite3.Connection, job: Job) -> None:
        if job.final:  # it spent no iteration; its attempt may be finalized again
            attempts.reopen_finalized(conn, job.attempt, job.id)
            return
        if job.check:
            return  # a check spent no iteration
        if job.attempt and not attempts.refund_attempt(conn, job.attempt, self._max_refunds):
            log.warning(
                "job %s failed; agent %s already had %d refunds on this task: charged",
                job.id,
                job.agent,
                self._max_refunds,
            )

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)


def _log_accepted(job: Job, task: Task, cached: Evaluation | None) -> None:
    log.info(
        "job accepted: job=%s agent=%s attempt=%s task=%s kind=%s answer=%s",
        job.id,
        job.agent,
        job.attempt or "-",
        task.address,
        "check" if job.check else "scored",
        "cache" if cached is not None else "queued",
    )


@dataclass(frozen=True)
class Unkept:
    """`store` as a lookup made before a call is accepted sees it: it reads, and keeps no files.
    Refused calls (a made-up or spent attempt) once kept 105 MB of files in 100 calls, free."""

    store: Store

    def get(self, key: str) -> Evaluation | None:
        return self.store.get(key)

    def put(self, key: str, evaluation: Evaluation) -> None:
        self.store.put(key, evaluation)

    def keep(self, candidate: Candidate) -> None:
        """Nothing: the runner keeps an accepted hit's files itself (Runner._keep)."""

    def kept(self, digest: str, task: str) -> Candidate | None:
        return self.store.kept(digest, task)


def job_id(
    agent: str, attempt_id: str, candidate: Candidate, task_digest: str = "", check: bool = False, final: bool = False
) -> str:
    """The same request gives the same id, so a retried Evaluate never makes a second job.

    The task's digest is part of it: after a task changes, the same candidate is a new job. A
    free check of a candidate, and the final evaluation Finalize makes of it, are jobs apart
    from its scored evaluation.
    """
    kind = ("check",) if check else ("final",) if final else ()
    parts = (agent, attempt_id, candidate.task, task_digest, candidate.digest) + kind
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def open_runner(
    repo_root: Path,
    state_dir: Path,
    lanes: tuple[str, ...] | None = None,
    store_path: Path | None = None,
    **options: Any,
) -> Runner:
    """A started runner with the real pipeline on this machine's lanes (scores cached in state_dir,
    or in `store`, e.g. a ReapiStore), evaluating through `executor` (default: this host, a child
    started ahead on each lane)."""
    from arena.executors.local import LocalExecutor

    lanes = lanes or discover_lanes()
    options["executor"] = options.get("executor") or LocalExecutor(cpu_sets=lane_cpus(lanes))
    options.setdefault("require_isolation", True)
    return Runner(
        repo_root,
        state_dir,
        evaluate=evaluate,
        settings=options.pop("settings", HarnessSettings()),
        store=options.pop("store", None) or SqliteStore(store_path or state_dir / "scores.sqlite"),
        lanes=lanes,
        **options,
    ).start()
