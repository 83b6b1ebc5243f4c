"""Accounting: operators record an attempt's usage and trajectory; the leaderboard shows their means."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.errors import InvalidRequest, NotFound, PermissionDenied
from arena.runner.accounting import compress_trajectory, inflate_trajectory, trajectory_size
from arena.runner.auth import Identity
from arena.runner.records import Usage
from arena.runner.runner import STATE_FILE, Runner
from arena.task.load import load_tasks

ALICE = Identity("alice")
BOB = Identity("bob")
OPS = Identity("ops", operator=True)
SOFTMAX = "tasks/triton2triton/softmax:softmax"
USAGE = Usage(input_tokens=1000, output_tokens=200, cached_tokens=600, cost_usd=0.5, turns=7, tool_calls=12, wall_s=90)


@pytest.fixture
def clock() -> list[float]:
    return [1000.0]


@pytest.fixture
def runner(repo: Path, make_runner, kit: Any, clock: list[float]) -> Runner:
    return make_runner(repo, kit.FakeEvaluate(), clock=lambda: clock[0], max_trajectory_bytes=4096)


def test_usage_and_trajectory_are_recorded_by_operators_and_read_by_the_owner(runner: Runner) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    events = b'{"type": "turn"}\n' * 100
    with pytest.raises(PermissionDenied, match="operators"):
        runner.record_usage(ALICE, attempt.id, USAGE, "events.jsonl", compress_trajectory(events))
    with pytest.raises(NotFound, match="no trajectory"):
        runner.trajectory(ALICE, attempt.id)
    runner.record_usage(OPS, attempt.id, USAGE, "events.jsonl", compress_trajectory(events))
    name, compressed = runner.trajectory(ALICE, attempt.id)
    assert name == "events.jsonl" and inflate_trajectory(compressed) == events and len(compressed) < len(events)
    assert inflate_trajectory(runner.trajectory(OPS, attempt.id)[1]) == events
    with pytest.raises(PermissionDenied, match="another agent"):
        runner.trajectory(BOB, attempt.id)


def test_a_trajectory_over_the_cap_is_refused_however_well_it_compresses(runner: Runner) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    bomb = gzip.compress(bytes(1 << 20))  # 1 MiB of zeros: about 1 KiB compressed
    assert len(bomb) < 4096
    with pytest.raises(InvalidRequest, match=r"more than the 4096 bytes .* the runner keeps per attempt"):
        runner.record_usage(OPS, attempt.id, USAGE, "events.jsonl", bomb)
    with pytest.raises(InvalidRequest, match="not gzip data"):
        runner.record_usage(OPS, attempt.id, USAGE, "events.jsonl", b"plain text, not compressed")
    with pytest.raises(InvalidRequest, match="cut short"):
        runner.record_usage(OPS, attempt.id, USAGE, "events.jsonl", gzip.compress(b"x" * 100)[:-6])
    with pytest.raises(NotFound):
        runner.trajectory(OPS, attempt.id)  # nothing of a refused request was kept


def test_the_cap_is_checked_before_compressing_and_after(runner: Runner) -> None:
    with pytest.raises(InvalidRequest, match="more than the 10 bytes"):
        compress_trajectory(b"x" * 11, max_bytes=10)
    assert trajectory_size(compress_trajectory(b"x" * 10, max_bytes=10), max_bytes=10) == 10


@pytest.mark.parametrize(
    "usage, field",
    [
        (Usage(input_tokens=-1), "input_tokens"),
        (Usage(cost_usd=float("nan")), "cost_usd"),
        (Usage(wall_s=float("inf")), "wall_s"),
    ],
)
def test_impossible_usage_is_refused(runner: Runner, usage: Usage, field: str) -> None:
    attempt = runner.open_attempt(ALICE, SOFTMAX)
    with pytest.raises(InvalidRequest, match=field):
        runner.record_usage(OPS, attempt.id, usage, "", b"")


def test_the_leaderboard_means_usage_over_the_closed_attempts_that_recorded_it(
    runner: Runner, kit: Any, clock: list[float]
) -> None:
    recorded, unrecorded, still_open = (runner.open_attempt(ALICE, SOFTMAX) for _ in range(3))
    for attempt, speedup in ((recorded, "2"), (unrecorded, "3")):
        evaluation = list(runner.evaluate(ALICE, attempt.id, kit.candidate(f"speedup={speedup}")))[-1]
        list(runner.evaluate(ALICE, attempt.id, kit.candidate(f"speedup={speedup}"), check=True))
        runner.submit(ALICE, attempt.id, evaluation.evaluation_id)
    runner.record_usage(OPS, recorded.id, USAGE, "", b"")
    runner.record_usage(OPS, still_open.id, Usage(input_tokens=9_000_000, cost_usd=99.0), "", b"")  # not closed
    (row,) = runner.leaderboard(ALICE)
    assert (row.mean_checks, row.mean_evaluations) == (1.0, 1.0)  # the runner's counters, both closed attempts
    assert (row.mean_input_tokens, row.mean_output_tokens, row.mean_cached_tokens) == (1000, 200, 600)
    assert (row.mean_cost_usd, row.mean_turns, row.mean_tool_calls, row.mean_wall_s) == (0.5, 7, 12, 90)
    runner.record_usage(OPS, unrecorded.id, Usage(input_tokens=3000, wall_s=30), "", b"")  # no cost known
    (row,) = runner.leaderboard(ALICE)
    assert row.mean_input_tokens == 2000 and row.mean_wall_s == 60 and row.mean_cost_usd == 0.5


def test_a_row_without_recorded_usage_leaves_it_blank(runner: Runner, kit: Any, clock: list[float]) -> None:
    runner.open_attempt(ALICE, SOFTMAX)
    clock[0] += 7200  # closed at its deadline, unsubmitted
    (row,) = runner.leaderboard(ALICE)
    assert row.tasks == 1 and row.mean_evaluations == 0.0
    assert row.mean_input_tokens is None and row.mean_cost_usd is None and row.mean_wall_s is None


# The state file as the first runners wrote it: no checks, no kinds of job, no finalize, no accounting.
OLD_SCHEMA = """
CREATE TABLE attempts (id TEXT PRIMARY KEY, agent TEXT NOT NULL, task TEXT NOT NULL, category TEXT NOT NULL,
    deadline_ms INTEGER NOT NULL, iterations_left INTEGER NOT NULL, submitted INTEGER NOT NULL DEFAULT 0,
    final_evaluation TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL);
CREATE TABLE jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, agent TEXT NOT NULL,
    attempt TEXT NOT NULL, task TEXT NOT NULL, candidate TEXT NOT NULL, state TEXT NOT NULL,
    claim TEXT NOT NULL DEFAULT '', lane TEXT NOT NULL DEFAULT '', evaluation TEXT NOT NULL DEFAULT '',
    error_kind TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL,
    finished_ms INTEGER NOT NULL DEFAULT 0);
INSERT INTO attempts (id, agent, task, category, deadline_ms, iterations_left, created_ms)
    VALUES ('old', 'alice', 'tasks/triton2triton/softmax:softmax', 'triton2triton', 5000, 3, 1000);
"""


def test_a_state_folder_from_before_accounting_opens_and_gains_it(repo: Path, kit: Any, tmp_path: Path) -> None:
    state = tmp_path / "old-state"
    state.mkdir()
    with sqlite3.connect(state / STATE_FILE) as connection:
        connection.executescript(OLD_SCHEMA)
    runner = Runner(repo, state, kit.FakeEvaluate(), tasks=load_tasks(repo), durable=False, clock=lambda: 10.0)
    runner.start()
    try:
        old = runner.get_attempt(ALICE, "old")
        assert old.iterations_left == 3 and not old.finalized and old.checks_used == 0
        finalized = runner.finalize(OPS, "old", kit.candidate("speedup=2"))  # its deadline passed
        assert finalized.finalized
        runner.record_usage(OPS, "old", USAGE, "events.jsonl", compress_trajectory(b"{}\n"))
        assert inflate_trajectory(runner.trajectory(ALICE, "old")[1]) == b"{}\n"
    finally:
        runner.stop(timeout_s=2)
