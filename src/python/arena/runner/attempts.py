"""Attempts: one agent's go at one task, with the wall-clock and iteration budgets the runner enforces.

Every function takes the connection of an open transaction (database.Database.transaction), so
checking a budget and spending it happen atomically: concurrent Evaluate calls count exactly.
An agent opens at most `max_attempts` attempts per task, and gets back at most `max_refunds`
iterations per task for jobs the runner failed: beyond those, retrying buys nothing.
"""

from __future__ import annotations

import sqlite3
import uuid

from arena.errors import BudgetExhausted, InvalidRequest, NotFound, PermissionDenied
from arena.runner.quoting import quote
from arena.runner.records import Attempt
from arena.task.task import Task


def open_attempt(conn: sqlite3.Connection, agent: str, task: Task, now_ms: int, max_attempts: int) -> Attempt:
    """A new attempt: deadline = now + task.budget_seconds, iterations = task.iterations; BudgetExhausted
    once `agent` has opened `max_attempts` on `task`."""
    (opened,) = conn.execute(
        "SELECT COUNT(*) FROM attempts WHERE agent = ? AND task = ?", (agent, task.address)
    ).fetchone()
    if opened >= max_attempts:
        raise BudgetExhausted(
            f"agent {agent!r} has opened {opened} attempts on {task.address}, the most this runner allows "
            f"per agent and task (max_attempts={max_attempts})"
        )
    attempt = Attempt(
        id=uuid.uuid4().hex,
        task=task.address,
        agent=agent,
        deadline_unix_ms=now_ms + task.budget_seconds * 1000,
        iterations_left=task.iterations,
        category=task.category.value,
    )
    conn.execute(
        "INSERT INTO attempts (id, agent, task, category, deadline_ms, iterations_left, created_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            attempt.id,
            agent,
            attempt.task,
            attempt.category,
            attempt.deadline_unix_ms,
            attempt.iterations_left,
            now_ms,
        ),
    )
    return attempt


def find_attempt(conn: sqlite3.Connection, attempt_id: str) -> Attempt:
    """The attempt `attempt_id`, whoever opened it (for operators' calls)."""
    row = conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    if row is None:
        raise NotFound(f"no attempt {quote(attempt_id)}")
    return attempt_from_row(row)


def read_attempt(conn: sqlite3.Connection, attempt_id: str, agent: str) -> Attempt:
    """The attempt `attempt_id`, if `agent` opened it."""
    attempt = find_attempt(conn, attempt_id)
    if attempt.agent != agent:
        raise PermissionDenied(f"attempt {quote(attempt_id)} belongs to another agent")
    return attempt


def _open_for(conn: sqlite3.Connection, attempt_id: str, agent: str, task: str, now_ms: int) -> Attempt:
    """The attempt, if it is `agent`'s, for `task`, not submitted and within its deadline."""
    attempt = read_attempt(conn, attempt_id, agent)
    if attempt.task != task:
        raise InvalidRequest(f"attempt {quote(attempt_id)} is for {attempt.task}, the candidate for {task}")
    if attempt.submitted:
        raise BudgetExhausted(f"attempt {quote(attempt_id)} is already submitted")
    if now_ms > attempt.deadline_unix_ms:
        raise BudgetExhausted(f"attempt {quote(attempt_id)} passed its deadline")
    return attempt


def charge_attempt(conn: sqlite3.Connection, attempt_id: str, agent: str, task: str, now_ms: int) -> Attempt:
    """Spend one iteration of the attempt on a candidate for `task`, or raise BudgetExhausted."""
    attempt = _open_for(conn, attempt_id, agent, task, now_ms)
    if attempt.iterations_left <= 0:
        raise BudgetExhausted(f"attempt {quote(attempt_id)} has no iterations left")
    conn.execute("UPDATE attempts SET iterations_left = iterations_left - 1 WHERE id = ?", (attempt_id,))
    return read_attempt(conn, attempt_id, agent)


def charge_check(
    conn: sqlite3.Connection, attempt_id: str, agent: str, task: str, now_ms: int, max_checks: int
) -> Attempt:
    """Count one free check against the attempt (its iterations stay as they are), or raise
    BudgetExhausted once `max_checks` were used."""
    attempt = _open_for(conn, attempt_id, agent, task, now_ms)
    if attempt.checks_used >= max_checks:
        raise BudgetExhausted(
            f"attempt {quote(attempt_id)} used its {max_checks} free checks; a scored evaluation still works"
        )
    conn.execute("UPDATE attempts SET checks_used = checks_used + 1 WHERE id = ?", (attempt_id,))
    return read_attempt(conn, attempt_id, agent)


def unchecked_as_check(conn: sqlite3.Connection, attempt_id: str, max_checks: int) -> bool:
    """A scored evaluation that came back NEEDS_DEVICE (this runner's lane could compile it but
    not check it) measured nothing: it costs a free check instead of an iteration, while the
    attempt has checks left (False: it stays an iteration, so compiles are never unbounded)."""
    row = conn.execute("SELECT checks_used FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    if row is None or row["checks_used"] >= max_checks:
        return False
    conn.execute(
        "UPDATE attempts SET checks_used = checks_used + 1, iterations_left = iterations_left + 1 WHERE id = ?",
        (attempt_id,),
    )
    return True


def refund_attempt(conn: sqlite3.Connection, attempt_id: str, max_refunds: int) -> bool:
    """Give back an iteration spent on an evaluation the runner itself failed to run, unless the
    attempt's agent already got `max_refunds` back on this task (then it stays spent: False)."""
    row = conn.execute("SELECT agent, task FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    if row is None:
        return False
    refunded = conn.execute(
        "SELECT count FROM refunds WHERE agent = ? AND task = ?", (row["agent"], row["task"])
    ).fetchone()
    if refunded is not None and refunded["count"] >= max_refunds:
        return False
    conn.execute(
        "INSERT INTO refunds (agent, task, count) VALUES (?, ?, 1)"
        " ON CONFLICT (agent, task) DO UPDATE SET count = count + 1",
        (row["agent"], row["task"]),
    )
    conn.execute("UPDATE attempts SET iterations_left = iterations_left + 1 WHERE id = ?", (attempt_id,))
    return True


def submit_attempt(conn: sqlite3.Connection, attempt_id: str, agent: str, evaluation_id: str) -> Attempt:
    """Close the attempt, recording `evaluation_id` (already checked to be its own) as final."""
    attempt = read_attempt(conn, attempt_id, agent)
    if attempt.submitted:
        raise BudgetExhausted(f"attempt {quote(attempt_id)} is already submitted")
    conn.execute("UPDATE attempts SET submitted = 1, final_evaluation = ? WHERE id = ?", (evaluation_id, attempt_id))
    return read_attempt(conn, attempt_id, agent)


def finalize_attempt(conn: sqlite3.Connection, attempt_id: str, evaluation_id: str) -> Attempt:
    """Close the attempt with `evaluation_id`, the runner's evaluation of its workspace (Finalize),
    marked as not chosen by its agent. The attempt has no submission (the caller checked)."""
    conn.execute(
        "UPDATE attempts SET submitted = 1, final_evaluation = ?, finalized = 1 WHERE id = ? AND submitted = 0",
        (evaluation_id, attempt_id),
    )
    return find_attempt(conn, attempt_id)


def reopen_finalized(conn: sqlite3.Connection, attempt_id: str, evaluation_id: str) -> None:
    """Undo finalize_attempt when its evaluation failed (a fault of the runner, never of the files):
    the attempt counts as nothing delivered past its deadline, and Finalize may be asked again."""
    conn.execute(
        "UPDATE attempts SET submitted = 0, final_evaluation = '', finalized = 0"
        " WHERE id = ? AND finalized = 1 AND final_evaluation = ?",
        (attempt_id, evaluation_id),
    )


def attempt_from_row(row: sqlite3.Row) -> Attempt:
    return Attempt(
        id=row["id"],
        task=row["task"],
        agent=row["agent"],
        deadline_unix_ms=row["deadline_ms"],
        iterations_left=row["iterations_left"],
        submitted=bool(row["submitted"]),
        final_evaluation=row["final_evaluation"],
        category=row["category"],
        checks_used=row["checks_used"],
        finalized=bool(row["finalized"]),
    )
