"""How one harness run is performed: limits, backend, repetition budget, hidden cases."""

from __future__ import annotations

from dataclasses import dataclass

BACKENDS = ("auto", "cuda", "rocm", "cpu")
# Inputs of a timed call after the cache flush: "small" reads them back into the cache when the
# call's inputs and outputs fit in a quarter of the last-level cache (as the op that made them
# would leave them in a model); "never" times every call from a flushed cache (docs/harness.md).
WARM_INPUTS = ("small", "never")
# Fresh workers a judge may start, beyond the first, to find one whose cost of a later launch is
# its own kind's (judged_timing.KIND_MATCH_US; matching.Workers.match): each costs a reading, and
# what of its start the reading before it does not hide.
MAX_MATCH_LAUNCHES = 4


@dataclass(frozen=True)
class HarnessSettings:
    """Settings of one run; every field takes part in the cache key (EVAL engineer)."""

    timeout_s: float = 600  # wall clock for the whole child; the process group is killed after it
    check_only: bool = False  # compile and check, never time
    backend: str = "auto"  # auto | cuda | rocm | cpu (cpu: Triton interpreter, no timings)
    device: int = 0  # GPU index the child uses
    trials: int = 3  # A/B trials of baseline then candidate, per timed case
    budget_s_per_case: float = 1.0  # device time for all trials of one timed case, both sides
    hidden_seeds: int = 1  # hidden copies of every declared case, seeds derived from secret_seed
    secret_seed: int | None = None  # None: the parent draws one with secrets.randbits(63)
    # Names of the declared cases to run (hidden copies are drawn from these only); empty: all.
    # Set by arena.evaluation for CPU runs, which check only the small, non-timed cases.
    cases: tuple[str, ...] = ()
    warm_inputs: str = "small"  # small | never (WARM_INPUTS)
    # Fresh workers to try for one of the judge's launch kind (0: none). 3: the multi-launch no-ops
    # within +-0.5% in 11 of 12 readings against 4 of 12 with 0 (bench/results/2026-12-07.md, session 40).
    match_launches: int = 3
    # The judge maps a block its worker allocates, as the worker maps the judge's (mirror.py): an
    # experiment on the no-ops of gathers that lean below 1.00, off until measured.
    mirror_lent: bool = False
    # Call k's set at the same place of the worker's lent pool as of the judge's pool (placement.
    # Scatter.place's `at`), not a place of its own: an experiment on no-ops whose pairs differ at
    # random by where each side's set lies (moe_grouped_gemm), off until measured.
    same_places: bool = False
    # The baseline timed in a worker of its own, through the chunk procedure the candidate's
    # worker runs (baseline_apart.py), not in the judge: an experiment on the no-ops a process
    # boundary biases (a 3 us copy's no-op read 1.02-1.06, the worker's side slower), off until
    # measured.
    baseline_worker: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend {self.backend!r}: expected one of {', '.join(BACKENDS)}")
        if self.warm_inputs not in WARM_INPUTS:
            raise ValueError(f"warm_inputs {self.warm_inputs!r}: expected one of {', '.join(WARM_INPUTS)}")
        if not 0 <= self.match_launches <= MAX_MATCH_LAUNCHES:
            raise ValueError(f"match_launches {self.match_launches}: expected 0 to {MAX_MATCH_LAUNCHES}")
