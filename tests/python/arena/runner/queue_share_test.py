"""One agent cannot take the queue from the others: at most max_pending_per_agent of its jobs wait."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from arena.errors import Throttled
from arena.runner.auth import Identity
from arena.runner.runner import MAX_PENDING_PER_AGENT
from arena_testing.waiting import wait_until

ALICE = Identity("alice")
BOB = Identity("bob")
OPS = Identity("ops", operator=True)
SOFTMAX = "tasks/triton2triton/softmax:softmax"
SCAN = "tasks/hip2hip/scan:scan"


def test_one_agent_holds_at_most_its_share_of_the_queue(repo: Path, make_runner, kit) -> None:
    """Before: one agent's free checks over 3 attempts on each of 2 tasks put 198 jobs ahead of
    every other agent's (3 tasks fill the 256 places: QueueFull for everyone else)."""
    gate = threading.Semaphore(0)  # every job is held until the test lets it go
    fake = kit.FakeEvaluate(gate=gate)
    runner = make_runner(repo, fake)
    try:
        attempts = [runner.open_attempt(ALICE, SOFTMAX).id for _ in range(2)]
        runner.evaluate(ALICE, attempts[0], kit.candidate("check 0"), check=True)
        wait_until(lambda: fake.running == 1, "the lane to hold alice's first job")
        waiting = [
            iter(runner.evaluate(ALICE, attempts[0], kit.candidate(f"check {i + 1}"), check=True))
            for i in range(MAX_PENDING_PER_AGENT)
        ]
        assert [next(stream).stage for stream in waiting] == ["queued"] * MAX_PENDING_PER_AGENT
        with pytest.raises(Throttled, match=f"max_pending_per_agent={MAX_PENDING_PER_AGENT}"):
            runner.evaluate(ALICE, attempts[1], kit.candidate("one more"), check=True)  # any attempt of hers
        assert runner.get_attempt(ALICE, attempts[1]).checks_used == 0  # the refusal spent nothing
        assert next(iter(runner.evaluate(ALICE, attempts[0], kit.candidate("check 1"), check=True))).stage == "queued"
        bob = runner.open_attempt(BOB, SOFTMAX).id
        # By turn: bob, with no job running or waiting, goes before all 16 of alice's.
        assert next(iter(runner.evaluate(BOB, bob, kit.candidate("bob")))).queue_position == 0
        operator = [next(iter(runner.evaluate(OPS, "", kit.candidate(f"ops {i}")))) for i in range(20)]
        assert {step.stage for step in operator} == {"queued"}  # an operator's suite queues as it needs
    finally:
        gate.release(100)


def test_waiting_jobs_run_by_turn_each_agents_first_before_any_second(repo: Path, make_runner, kit) -> None:
    """Before: the queue ran in arrival order, so bob's job waited for every job alice had queued
    before it (up to her share of 16). Now alice has a job running and bob none: his goes next."""
    gate = threading.Semaphore(0)
    fake = kit.FakeEvaluate(gate=gate)
    runner = make_runner(repo, fake)
    try:
        alice, bob = runner.open_attempt(ALICE, SOFTMAX).id, runner.open_attempt(BOB, SOFTMAX).id
        first = iter(runner.evaluate(ALICE, alice, kit.candidate("alice 0"), check=True))
        next(first)
        wait_until(lambda: fake.running == 1, "the lane to hold alice's first job")
        queued = [kit.candidate(f"alice {i}") for i in (1, 2, 3)] + [kit.candidate("bob 0")]
        streams = [iter(runner.evaluate(ALICE, alice, c, check=True)) for c in queued[:3]]
        streams.append(iter(runner.evaluate(BOB, bob, queued[3], check=True)))
        assert [next(stream).queue_position for stream in streams] == [1, 2, 3, 0]
        gate.release(5)
        wait_until(lambda: len(fake.calls) == 5, "every job to run")
        order = [digest for _, digest in fake.calls[1:]]
        assert order == [queued[3].digest, queued[0].digest, queued[1].digest, queued[2].digest]
    finally:
        gate.release(100)
