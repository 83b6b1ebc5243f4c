"""The Evaluation: everything one run of a candidate on a task produced, and where it came from.

These records mirror proto/arena/v1/evaluation.proto field for field (snake_case); arena.api.convert
translates them to and from the generated messages. `to_dict()` is the JSON the CLI writes and the
score cache stores; `from_dict()` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import Any, Mapping

from arena.environment.environment import Environment
from arena.scoring.records import CaseResult, Score, Timing
from arena.task.archs import NOT_HERE


class Status(str, Enum):
    """The outcome of an evaluation; candidate failures are statuses, never exceptions."""

    STATUS_UNSPECIFIED = "STATUS_UNSPECIFIED"
    PASSED = "PASSED"
    COMPILE_ERROR = "COMPILE_ERROR"
    INCORRECT = "INCORRECT"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    CHEAT_DETECTED = "CHEAT_DETECTED"
    INVALID_CANDIDATE = "INVALID_CANDIDATE"
    NEEDS_DEVICE = "NEEDS_DEVICE"  # compiled, but checking or timing needs a GPU this machine lacks


@dataclass(frozen=True)
class Stage:
    name: str  # compile | check | time
    ok: bool
    seconds: float
    log: str = ""  # cut to a fixed size by the harness


@dataclass(frozen=True)
class Evaluation:
    id: str  # short unique id of this evaluation (a cache hit keeps the stored one)
    task: str  # the task's address
    task_digest: str
    candidate_digest: str
    status: Status
    compiled: bool
    correct: bool
    stages: tuple[Stage, ...] = ()
    cases: tuple[CaseResult, ...] = ()
    score: Score = Score()
    environment: Environment = Environment()
    harness_version: str = ""  # sha256 of the harness sources
    errors: tuple[str, ...] = ()  # harness errors and review flags, one line each
    cache_key: str = ""
    cached: bool = False  # True when returned from the score cache
    created_unix_ms: int = 0

    def __post_init__(self) -> None:
        problem = contradiction(self.status, self.compiled, self.correct)
        if problem:
            raise ValueError(f"evaluation {self.id}: {problem}")

    @property
    def speedup(self) -> float:
        return self.score.speedup

    @property
    def for_another_gpu(self) -> bool:
        """NEEDS_DEVICE on a GPU the task's archs do not cover (task/archs.py): nothing of it ran."""
        return self.status is Status.NEEDS_DEVICE and any(error.startswith(NOT_HERE) for error in self.errors)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict, snake_case as in the proto, plus top-level `speedup` and `points`."""
        out = asdict(self)
        out["status"] = self.status.value
        out["speedup"] = self.score.speedup
        out["points"] = self.score.points
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Evaluation:
        """The inverse of to_dict; unknown keys (and the derived speedup/points) are ignored."""
        # Any: the fields differ in type, which a plain dict literal would join to `object`.
        values: dict[str, Any] = {
            **_known(cls, raw),
            "status": Status(raw["status"]),
            "stages": tuple(Stage(**_known(Stage, s)) for s in raw.get("stages", ())),
            "cases": tuple(_case_from_dict(c) for c in raw.get("cases", ())),
            "score": Score(**_known(Score, raw.get("score") or {})),
            "environment": Environment(**_known(Environment, raw.get("environment") or {})),
            "errors": tuple(str(e) for e in raw.get("errors", ())),
        }
        return cls(**values)


def contradiction(status: Status, compiled: bool, correct: bool) -> str:
    """Why `status` with these flags cannot describe one evaluation ("" when it can)."""
    if correct and not compiled:
        return "correct but not compiled"
    if correct != (status is Status.PASSED):
        return f"status {status.value} with correct={correct}"
    if compiled and status in (Status.COMPILE_ERROR, Status.INVALID_CANDIDATE):
        return f"status {status.value} but compiled"
    return ""


def _known(record: type, raw: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(record)}
    return {key: value for key, value in raw.items() if key in names}


def _case_from_dict(raw: Mapping[str, Any]) -> CaseResult:
    timings = {
        side: Timing(**_known(Timing, raw[side])) if raw.get(side) else None for side in ("baseline", "candidate")
    }
    return CaseResult(**{**_known(CaseResult, raw), **timings})
