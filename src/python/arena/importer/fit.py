"""A loosened tolerance fitted to what it must refuse (docs/importer.md, "Fitted tolerances").

AKA's tests often compare within 1e-2 where arena's default is 1e-5 (float32) or 1e-3 (float16),
and the fast tier's check c (arena/validation/precision.py) then finds that the reference computed
in lower precision passes the task on every case where arena's default refuses it. For such a
dtype the importer writes the loosest tolerance that still refuses that lowered reference, with a
margin: atol = rtol = s, s the largest value of a 1-2-5 ladder (1e-6 .. 1) that is at most half
the lowered reference's error scale s_low, at least arena's default and at least twice the
reference's own error (validation checks the reference against float64 within it), each component
capped at AKA's own (never looser than the test's), and at least twice the baseline's own error
against the reference (validation checks the baseline within it: a baseline that computes in the
lower precision itself gets no tolerance it would fail). Where no value fits, arena's default for
the dtype is written if it is at least twice both errors (check c never fails a default
tolerance); where even the default would refuse the reference or the baseline, AKA's tolerance is
kept and the report says why.

s_low is measured in a child process (arena/importer/fit_child.py), as check c measures it: the
task's reference on its untimed cases, lowered by precision.py, against float64; the baseline
there as the fast tier runs it (the Triton interpreter without a GPU). Many tasks go
through one child; a task that crashes it or outlasts its time limit keeps AKA's tolerance alone
and a new child takes the tasks after it. This module does not import torch.
"""

from __future__ import annotations

import math
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from arena.environment.measurement import current_measurement
from arena.errors import ArenaError
from arena.task.task import FLOAT_DTYPES, Tolerance
from arena.task.tolerance import DEFAULT_TOLERANCES
from arena.validation.fast import ChildReader

LADDER = tuple(float(f"{m}e{e}") for e in range(-6, 0) for m in (1, 2, 5)) + (1.0,)
MARGIN = 2.0  # s is at most s_low / MARGIN: the lowered reference is refused by at least this factor
TASK_TIMEOUT_S = 120.0  # one task's lowered reference on its untimed cases, at most
CHILD = "arena.importer.fit_child"
_TAIL = 2000  # bytes of the child's output quoted when it dies


@dataclass(frozen=True)
class Fit:
    """One loosened float dtype of one task: AKA's tolerance, and the fitted one or why none."""

    dtype: str
    aka: Tolerance
    fitted: Tolerance | None = None
    s_low: float | None = None  # the lowered reference's error scale where it is largest
    case: str = ""  # where: the case and the output
    output: str = ""
    reason: str = ""  # why AKA's tolerance is kept ("" when fitted)
    default: bool = False  # fitted is arena's default (capped at AKA's): no ladder value fits

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "fitted": self.fitted is not None,
            "from": _tolerance_dict(self.aka),
            "to": _tolerance_dict(self.fitted) if self.fitted else None,
            "s_low": self.s_low if self.s_low is None or math.isfinite(self.s_low) else None,
            "case": self.case,
            "output": self.output,
            "reason": self.reason,
            "default": self.default,
        }

    def describe(self) -> str:
        """E.g. `float32 atol 0.01, rtol 0.01 -> atol 0.002, rtol 0.002 (s_low 0.0046, case 'shape1',
        output 'y')`, or AKA's kept with the reason."""
        aka = f"{self.dtype} {_shown(self.aka)}"
        if self.fitted is None:
            return f"{aka} kept: {self.reason}"
        where = f"s_low {self.s_low:.3g}, case {self.case!r}, output {self.output!r}"
        if self.default:
            return f"{aka} -> arena's default {_shown(self.fitted)} (no ladder value fits: {where})"
        return f"{aka} -> {_shown(self.fitted)} ({where})"

    def comment(self) -> str:
        """The BUILD file's comment above the fitted tolerance: that it was fitted, and AKA's."""
        assert self.fitted is not None and self.s_low is not None
        if self.default:
            return (
                f"{self.dtype} tolerance set to arena's default by `arena import aka` (docs/importer.md); "
                f"AKA's test has {_shown(self.aka)}, which accepts the lower-precision reference "
                f"(s_low {self.s_low:.3g}, case {self.case!r}), and no looser value refuses it by a "
                f"factor of {MARGIN:g}"
            )
        return (
            f"{self.dtype} tolerance fitted by `arena import aka` (docs/importer.md); AKA's test has "
            f"{_shown(self.aka)}, which accepts the lower-precision reference "
            f"(s_low {self.s_low:.3g}, case {self.case!r})"
        )


def loosened(tolerances: Mapping[str, Mapping[str, float]]) -> dict[str, Tolerance]:
    """The declared float tolerances that accept more than arena's default, by dtype (what
    arena.validation.precision.loosened finds on the loaded task)."""
    found = {}
    for dtype, values in tolerances.items():
        default = DEFAULT_TOLERANCES.get(dtype)
        if dtype not in FLOAT_DTYPES or default is None:
            continue
        mine = Tolerance(float(values.get("atol", default.atol)), float(values.get("rtol", default.rtol)))
        if mine.atol > default.atol or mine.rtol > default.rtol:
            found[dtype] = mine
    return found


def ladder_value(s_low: float, aka: Tolerance, default: Tolerance, s_ref: float = 0.0) -> float | None:
    """The largest LADDER value s with s <= s_low / MARGIN, s >= the default, s >= s_ref * MARGIN
    (s_ref: the larger of the reference's own error in its dtype, which validation's float64 check
    of it must accept, and the baseline's error against the reference, which validation's check of
    the baseline must accept) and s below the looser of AKA's atol and rtol (at or above it the
    capped tolerance would be AKA's own); None if none."""
    low, high = max(default.atol, default.rtol, s_ref * MARGIN), max(aka.atol, aka.rtol)
    return max((s for s in LADDER if low <= s <= s_low / MARGIN and s < high), default=None)


def decide(dtype: str, aka: Tolerance, message: Mapping[str, Any]) -> Fit:
    """The fit of one dtype from the child's measurement of its task (fit_child.py)."""
    if "error" in message:
        return Fit(dtype, aka, reason=f"not measured: {message['error']}")
    rows = [row for row in message.get("measured", []) if row["dtype"] == dtype]
    if not rows:
        why = "; ".join(message.get("notes", [])) or "no untimed case has a lower precision to compare"
        return Fit(dtype, aka, reason=f"not measured: {why}")
    refused = [row for row in rows if row["default_refuses"]]
    if not refused:
        return Fit(
            dtype, aka, reason="arena's default accepts the lowered reference too: check c has nothing to refuse"
        )
    caught = [row for row in refused if row["task_refuses"]]
    if caught:
        return Fit(dtype, aka, reason=f"it refuses the lowered reference already (case {caught[0]['case']!r})")
    worst = max(refused, key=lambda row: float(row["s_low"]))
    s_low, case, output = float(worst["s_low"]), str(worst["case"]), str(worst["output"])
    s_ref = max(float(row.get("s_ref", 0.0)) for row in rows)
    s_base = max(float(row.get("s_base") or 0.0) for row in rows)  # None: the baseline did not run here
    default = DEFAULT_TOLERANCES[dtype]
    s = ladder_value(s_low, aka, default, max(s_ref, s_base))
    if s is None and max(s_ref, s_base) * MARGIN <= min(default.atol, default.rtol):  # the default meets both
        capped = Tolerance(min(default.atol, aka.atol), min(default.rtol, aka.rtol))
        return Fit(dtype, aka, capped, s_low, case, output, default=True)
    if s is None:
        whose, own = ("the baseline's", s_base) if s_base > s_ref else ("the reference's own", s_ref)
        reason = (
            f"no ladder value lies between {MARGIN:g} x {whose} error in {dtype} ({MARGIN * own:.3g}) and "
            f"s_low / {MARGIN:g} ({s_low / MARGIN:.3g}), below AKA's, and arena's default ({_shown(default)}) "
            f"would refuse the {'baseline' if s_base > s_ref else 'reference'}"
        )
        return Fit(dtype, aka, None, s_low, case, output, reason)
    return Fit(dtype, aka, Tolerance(min(s, aka.atol), min(s, aka.rtol)), s_low, case, output)


def fit_tolerances(out: Path, tasks: Mapping[str, Mapping[str, Tolerance]]) -> dict[str, list[Fit]]:
    """Per address of an imported task under `out`: the fit of each loosened dtype (`tasks`: the
    address's loosened tolerances, by dtype)."""
    messages = measure(out, list(tasks))
    return {
        address: [decide(dtype, aka, messages[address]) for dtype, aka in tolerances.items()]
        for address, tolerances in tasks.items()
    }


def measure(out: Path, addresses: Sequence[str], timeout_s: float = TASK_TIMEOUT_S) -> dict[str, dict[str, Any]]:
    """The child's message for every address ({"measured", "notes"}), or {"error": why} for a task
    whose child died or outlasted `timeout_s`, and for all when no child can start."""
    try:
        measurement = current_measurement()
    except ArenaError as error:  # e.g. the light command line, without torch
        return {address: {"error": f"no measurement environment: {error}"} for address in addresses}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(measurement.path)}
    found: dict[str, dict[str, Any]] = {}
    pending = list(addresses)
    while pending:
        read_end, write_end = os.pipe()
        command = [measurement.python, "-m", CHILD, str(out.resolve()), str(write_end), *pending]
        with tempfile.TemporaryFile() as log:  # a file, not a pipe: a task that prints much never blocks
            child = subprocess.Popen(
                command, env=env, pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
            os.close(write_end)
            reader, current, started = ChildReader(read_end, child, timeout_s), "", False
            try:
                for message in reader:
                    current = str(message.get("start", ""))
                    started = started or bool(current)
                    if "task" in message:
                        found[str(message["task"])] = message
            finally:
                os.close(read_end)
                child.kill()
                child.wait()
            log.seek(max(0, log.seek(0, os.SEEK_END) - _TAIL))
            tail = log.read().decode(errors="replace").strip()
        rest = [address for address in pending if address not in found]
        if not rest:
            break
        why = f"took over {timeout_s:g} s" if reader.timed_out else f"ended the process (exit {child.returncode})"
        if not started:  # no task began: none would in a new child either
            found.update({address: {"error": f"the fitting process did not start: {why}: {tail}"} for address in rest})
            break
        failed = current or rest[0]
        found[failed] = {"error": f"the lowered reference {why}: {tail}"}
        pending = pending[pending.index(failed) + 1 :]
    return found


def _tolerance_dict(tolerance: Tolerance) -> dict[str, float]:
    return {"atol": tolerance.atol, "rtol": tolerance.rtol}


def _shown(tolerance: Tolerance) -> str:
    return f"atol {tolerance.atol:g}, rtol {tolerance.rtol:g}"
