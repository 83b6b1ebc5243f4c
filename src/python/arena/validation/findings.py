"""What validating a task found: checks passed, notes, failures (any failure makes the task invalid)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Findings:
    """One task's validation: `failures` make it invalid; `notes` say what could not be checked here."""

    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"failures": self.failures, "notes": self.notes, "passed": self.passed}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Findings:
        return cls(*(list(map(str, raw.get(key, []))) for key in ("failures", "notes", "passed")))

    def lines(self) -> list[str]:
        """The report, one check a line: ok, note, then FAIL lines."""
        return (
            [f"ok    {line}" for line in self.passed]
            + [f"note  {line}" for line in self.notes]
            + [f"FAIL  {line}" for line in self.failures]
        )
