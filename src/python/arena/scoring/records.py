"""What scoring makes of raw per-call samples: timing statistics, scored cases and the score.

The Evaluation record (arena.evaluation.evaluation) holds these; proto/arena/v1/evaluation.proto
mirrors them field for field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Timing:
    """Robust statistics of one kernel's per-call device times on one case, in microseconds."""

    median_us: float
    mean_us: float
    min_us: float
    iqr_us: float
    ci_low_us: float  # bootstrap 95% interval of the mean
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
    speedup: float = 0.0  # baseline mean / candidate mean (outliers dropped); 0 when not timed
    speedup_ci_low: float = 0.0
    speedup_ci_high: float = 0.0
    within_noise: bool = False  # the speedup cannot be told apart from 1.0
    sol_fraction: float = 0.0  # speed-of-light fraction of the candidate; 0 when unknown
    hidden: bool = False  # a case drawn at evaluation time with a fresh seed


@dataclass(frozen=True)
class Score:
    points: float = 0.0  # the seed's: 20 compiled + 100 correct + 100 x speedup
    speedup: float = 0.0  # mean of per-case ratios over timed cases (the seed's); 0 when not timed
    geomean_speedup: float = 0.0  # weighted geometric mean of per-case ratios; 0 when not timed
    reward: float = 0.0  # log geomean speedup; 0 for a no-op; a fixed penalty when incorrect
    fast_p: Mapping[str, bool] = field(default_factory=dict)  # "1.0", "1.2", "2.0"
    noise_floor: float = 0.0  # relative half-width under which a speedup is noise
