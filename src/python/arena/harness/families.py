"""The input sets a candidate is called on, per declared case, and the record of each case's verdict.

A family is one declared case, its hidden copies (seeds from the secret seed) and, for a timed
case, enough timing-only sets that the timed loop can rotate over three.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Callable

import torch

from arena.harness.device import Device
from arena.harness.inputs import derive_seed, hidden_cases, make_inputs
from arena.harness.result import CaseOutcome
from arena.task.formula import FormulaError, evaluate_formula
from arena.task.task import Case, Task

TIMED_SETS = 3  # input sets per timed case, at least


@dataclass
class Member:
    """One set of inputs the candidate is called on: a declared case, a hidden copy, or a timing-only set."""

    case: Case
    hidden: bool
    inputs: list[torch.Tensor]  # pristine, never handed to a kernel
    references: list[torch.Tensor] = field(default_factory=list)
    timing_only: bool = False  # drawn for the timed loop's rotation; never reported as a case


def make_families(task: Task, secret_seed: int, hidden_seeds: int, device: Device, timed: bool) -> list[list[Member]]:
    """Per declared case: the case, its hidden copies, then (timed cases, when timing) timing-only sets."""
    dev = device.torch_device
    families = []
    for case in task.cases:
        members = [Member(case, False, make_inputs(task, case, dev))]
        for hidden in hidden_cases(case, secret_seed, hidden_seeds):
            members.append(Member(hidden, True, make_inputs(task, hidden, dev)))
        for i in range(max(0, TIMED_SETS - len(members)) if case.timed and timed else 0):
            extra = dataclasses.replace(
                case, name=f"{case.name}~timing{i}", seed=derive_seed(secret_seed, case.name, "t", i)
            )
            members.append(Member(extra, True, make_inputs(task, extra, dev), timing_only=True))
        families.append(members)
    return families


def fresh_seeds(secret_seed: int, case_name: str) -> Callable[[int], list[int]]:
    """seeds(count): `count` seeds for new input sets of a timed case, never the same twice
    (derived from the secret seed, the case and a counter): no timed call sees inputs seen before."""
    drawn = itertools.count()
    return lambda count: [derive_seed(secret_seed, case_name, "fresh", next(drawn)) for _ in range(count)]


def inputs_for(task: Task, case: Case, seed: int, device: torch.device, fresh: bool = False) -> list[torch.Tensor]:
    """The input set of `case` drawn with `seed` (the judge and the worker draw the same set);
    `fresh`: a timed call's set, drawn whole on the device (inputs.make_inputs)."""
    return make_inputs(task, dataclasses.replace(case, seed=seed), device, on_device=fresh)


def case_outcome(task: Task, member: Member, error: str | None) -> CaseOutcome:
    """The verdict on one member, with the task's flops and bytes for its dimensions."""

    def formula(expr: str) -> float:
        try:
            return evaluate_formula(expr, member.case.dims, _esize(member.case.dtype)) if expr else 0.0
        except FormulaError:
            return 0.0

    return CaseOutcome(
        name=member.case.name,
        correct=error is None,
        timed=member.case.timed and not member.hidden,
        weight=member.case.weight,
        hidden=member.hidden,
        error=error or "",
        flops=formula(task.flops),
        bytes=formula(task.bytes),
    )


def _esize(dtype: str) -> int:
    return {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2}.get(dtype, 1)
