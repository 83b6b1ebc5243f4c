"""What the harness child reports to the parent, as plain JSON-able records.

The child writes one JSON document (HarnessResult.to_json) to the result descriptor, with an
HMAC from a per-run key; the parent verifies and parses it with HarnessResult.from_json and
never unpickles anything. Statistics and scores are computed by the parent from the raw samples.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StageLog:
    name: str  # compile | check | time
    ok: bool
    seconds: float
    log: str = ""  # cut to a fixed size by the child


@dataclass(frozen=True)
class CaseOutcome:
    name: str
    correct: bool
    timed: bool
    weight: float = 1.0
    hidden: bool = False  # drawn at evaluation time with a fresh seed
    error: str = ""  # the first mismatch: output name, index, got, want
    # Per-call device times in microseconds, in measurement order, trials concatenated.
    baseline_us: tuple[float, ...] = ()
    candidate_us: tuple[float, ...] = ()
    flops: float = 0.0  # from the task's formula for this case
    bytes: float = 0.0
    # Wall-clock cross-check: median of calls each followed by a device-wide sync (launch included).
    baseline_wall_us: float = 0.0
    candidate_wall_us: float = 0.0
    # Calls a timed chunk (the samples run in chunks of this many a side, the baseline leading
    # even chunks): the speedup's interval resamples chunk pairs. 0: not known.
    calls_a_chunk: int = 0


@dataclass(frozen=True)
class HarnessResult:
    # A Status name: PASSED, COMPILE_ERROR, INCORRECT, RUNTIME_ERROR, TIMEOUT, CHEAT_DETECTED,
    # INVALID_CANDIDATE, NEEDS_DEVICE (compiled; checking needs a GPU).
    status: str
    compiled: bool
    correct: bool
    stages: tuple[StageLog, ...] = ()
    cases: tuple[CaseOutcome, ...] = ()
    errors: tuple[str, ...] = ()
    # backend, gpu_name, gpu_arch, driver, versions{}, clocks{}, peak_bandwidth_gbs, peak_tflops
    environment: dict[str, object] = field(default_factory=dict)
    timings_available: bool = False  # False on the CPU interpreter and compile-only paths
    # Set only by the parent, never read from the child's frame: why the harness left no verdict
    # (the child ended or was killed without a signed result). Such a result is no one's score.
    harness_fault: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> HarnessResult:
        raw = json.loads(text)
        return cls(
            status=str(raw["status"]),
            compiled=bool(raw["compiled"]),
            correct=bool(raw["correct"]),
            stages=tuple(StageLog(**s) for s in raw.get("stages", ())),
            cases=tuple(_case_outcome_from(c) for c in raw.get("cases", ())),
            errors=tuple(str(e) for e in raw.get("errors", ())),
            environment=dict(raw.get("environment", {})),
            timings_available=bool(raw.get("timings_available", False)),
        )  # harness_fault stays "": a frame the judge signed is a verdict


def _case_outcome_from(raw: dict[str, Any]) -> CaseOutcome:
    # Any: the JSON fields differ in type, which a plain dict literal would narrow to the timings' type.
    values: dict[str, Any] = {
        **raw,
        "baseline_us": tuple(float(x) for x in raw.get("baseline_us", ())),
        "candidate_us": tuple(float(x) for x in raw.get("candidate_us", ())),
        "calls_a_chunk": max(0, int(raw.get("calls_a_chunk", 0))),
    }
    return CaseOutcome(**values)
