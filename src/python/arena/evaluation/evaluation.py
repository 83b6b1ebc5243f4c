"""The Evaluation: everything one run of a candidate on a task produced, and where it came from.

These records mirror proto/arena/v1/evaluation.proto field for field (snake_case); arena.api.convert
translates them to and from the generated messages. `to_dict()` is the JSON the CLI writes and the
score cache stores; `from_dict()` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, Mapping


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
class Timing:
    """Robust statistics of one kernel's per-call device times on one case, in microseconds."""

    median_us: float
    mean_us: float
    min_us: float
    iqr_us: float
    ci_low_us: float  # bootstrap 95% interval of the median
    ci_high_us: float
    samples: int  # kept after dropping 1.5 x IQR outliers
    sem_us: float = 0.0  # standard error of the mean (not yet in the proto)


@dataclass(frozen=True)
class CaseResult:
    """One case: its correctness and, when timed on a device, the candidate against the baseline."""

    name: str
    correct: bool
    timed: bool
    weight: float = 1.0
    error: str = ""  # the first mismatch, with indices and values
    baseline: Timing | None = None  # None when not timed or no device
    candidate: Timing | None = None
    speedup: float = 0.0  # baseline median / candidate median; 0 when not timed
    speedup_ci_low: float = 0.0
    speedup_ci_high: float = 0.0
    within_noise: bool = False  # the speedup cannot be told apart from 1.0
    sol_fraction: float = 0.0  # speed-of-light fraction of the candidate; 0 when unknown
    hidden: bool = False  # a case drawn at evaluation time with a fresh seed


@dataclass(frozen=True)
class Stage:
    name: str  # compile | check | time
    ok: bool
    seconds: float
    log: str = ""  # cut to a fixed size by the harness


@dataclass(frozen=True)
class Environment:
    """Where the evaluation ran; `fingerprint` (sha256 of the parent's probe) is part of the cache key."""

    fingerprint: str = ""
    backend: str = ""  # cuda | rocm | cpu-interpreter
    gpu_name: str = ""
    gpu_arch: str = ""
    driver: str = ""
    image_digest: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)  # torch, triton, python, nvcc, ...
    clocks: Mapping[str, str] = field(default_factory=dict)  # sampled clocks, temperature, power
    measurement: Mapping[str, str] = field(default_factory=dict)  # flush_bytes, event_overhead_us


@dataclass(frozen=True)
class Score:
    points: float = 0.0  # the seed's: 20 compiled + 100 correct + 100 x speedup
    speedup: float = 0.0  # mean of per-case ratios over timed cases (the seed's); 0 when not timed
    geomean_speedup: float = 0.0  # weighted geometric mean of per-case ratios; 0 when not timed
    reward: float = 0.0  # log geomean speedup; 0 for a no-op; a fixed penalty when incorrect
    fast_p: Mapping[str, bool] = field(default_factory=dict)  # "1.0", "1.2", "2.0"
    noise_floor: float = 0.0  # relative half-width under which a speedup is noise


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

    @property
    def speedup(self) -> float:
        return self.score.speedup

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


def _known(record: type, raw: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(record)}
    return {key: value for key, value in raw.items() if key in names}


def _case_from_dict(raw: Mapping[str, Any]) -> CaseResult:
    timings = {
        side: Timing(**_known(Timing, raw[side])) if raw.get(side) else None for side in ("baseline", "candidate")
    }
    return CaseResult(**{**_known(CaseResult, raw), **timings})
