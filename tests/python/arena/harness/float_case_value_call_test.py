"""A float scalar that differs by case (AKA's `sm_scale = 1 / sqrt(head_size)`), declared as a
case value: a scalar naming a dim that each case sets to a float. It reaches a Python entry by
name as that case's float, the reference too, in this process's judge with the candidate in its
worker (arena.harness.run), on the CPU backend."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

from arena.task.task import Case, Task
from arena_testing.harness_tasks import TRITON_ADD, build_task, run_verdict

# z = (x + y) * scale, the add task's kernel scaled; the entry and the reference refuse anything but a float.
KERNEL = TRITON_ADD.replace(
    "def add(x, y):\n", "def add(x, y, *, scale):\n    assert type(scale) is float, type(scale)\n"
).replace("    return z\n", "    return z * scale\n")

REFERENCE = """
def add(x, y, *, scale):
    assert type(scale) is float, type(scale)
    return (x + y) * scale
"""


def _task(root: Path) -> Task:
    task = build_task(root, baseline=KERNEL)
    (root / task.task_dir / "reference.py").write_text(textwrap.dedent(REFERENCE))
    # Case.dims is typed for int dims; a case value is the one float among them (task/task.py)
    small: dict[str, Any] = {"N": 129, "scale": 0.125}
    main: dict[str, Any] = {"N": 3000, "scale": 0.08838834764831843}
    cases = (Case("small", small, "float32", 1), Case("main", main, "float32", 2, timed=True))
    return dataclasses.replace(task, scalars={"scale": "scale"}, cases=cases)


def test_the_baseline_gets_each_case_s_float(tmp_path: Path, cpu: None) -> None:
    status, errors = run_verdict(tmp_path, _task(tmp_path), None)
    assert status == "PASSED", errors


def test_a_candidate_that_fixes_the_float_is_incorrect(tmp_path: Path, cpu: None) -> None:
    """Right on the first case's 0.125 only: the timed case's other value catches it."""
    source = textwrap.dedent(KERNEL).replace("    return z * scale\n", "    return z * 0.125\n")
    status, errors = run_verdict(tmp_path, _task(tmp_path), source)
    assert status == "INCORRECT" and any("output z" in e for e in errors), errors
