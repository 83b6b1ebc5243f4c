"""An executor that answers from a script: results or exceptions, simulating a machine's faults."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from arena.harness.result import HarnessResult
from arena_testing.waiting import WAIT_S


@dataclass
class FakeExecutor:
    """Answers each run with the next of `outcomes` (a result, or an exception to raise); a run
    waits while `gate` is shut (cleared by a test that holds a job), WAIT_S at the most."""

    outcomes: list[HarnessResult | Exception]
    runs: int = 0
    gate: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.gate.set()

    def run(self, task, candidate, repo_root, settings) -> HarnessResult:  # type: ignore[no-untyped-def]
        self.gate.wait(WAIT_S)
        self.runs += 1
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def describe(self) -> dict[str, str]:
        return {"executor": "fake"}

    def isolation(self) -> str:
        return "fake-sandbox"

    def environment(self, base):  # type: ignore[no-untyped-def]
        return base
