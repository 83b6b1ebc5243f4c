from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import pytest

from arena.task import digest
from arena.task.digest import SCORED_FIELDS, task_digest
from arena.task.load import load_tasks
from arena.task.task import Task

WriteTask = Callable[..., Path]


def load_one(root: Path) -> Task:
    (task,) = load_tasks(root)
    return task


def test_stable_across_loads_and_declaration_order(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    first = task_digest(load_one(tmp_path), tmp_path)
    assert len(first) == 64 and first == task_digest(load_one(tmp_path), tmp_path)
    # The same declaration with its keyword arguments in another order.
    lines = (folder / "BUILD").read_text().splitlines()
    (folder / "BUILD").write_text("\n".join([lines[0], *reversed(lines[1:-1]), lines[-1]]) + "\n")
    assert task_digest(load_one(tmp_path), tmp_path) == first


def test_changes_with_a_baseline_byte(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    before = task_digest(load_one(tmp_path), tmp_path)
    (folder / "kernel.py").write_bytes((folder / "kernel.py").read_bytes() + b" ")
    assert task_digest(load_one(tmp_path), tmp_path) != before


def test_changes_with_reference_file(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    before = task_digest(load_one(tmp_path), tmp_path)
    (folder / "reference.py").write_text("def softmax(x):\n    return x\n")
    assert task_digest(load_one(tmp_path), tmp_path) != before


def test_changes_with_a_case(triton_task: WriteTask, triton_fields: dict, tmp_path: Path) -> None:
    triton_task()
    before = task_digest(load_one(tmp_path), tmp_path)
    cases = triton_fields["cases"]
    cases[1]["seed"] = 4
    triton_task(cases=cases)
    assert task_digest(load_one(tmp_path), tmp_path) != before


def test_unchanged_by_description_budgets_exemplars(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    before = task_digest(load_one(tmp_path), tmp_path)
    triton_task(description="Another prompt.", budget_seconds=60, iterations=9, exemplars=[])
    assert task_digest(load_one(tmp_path), tmp_path) == before
    (folder / "wrong" / "kernel.py").write_text("def softmax(x):\n    return -x\n")
    assert task_digest(load_one(tmp_path), tmp_path) == before


def test_every_scored_field_counts(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task()
    task = load_one(tmp_path)
    before = task_digest(task, tmp_path)
    changed = {
        "flops": "6*M*N", "bytes": "3*M*N*esize", "forbidden": ("torch.exp",), "archs": ("sm_90",),
        "build": "make", "bench": "make bench", "scalars": {"s": 1}, "abi": ("x",),
        "editable": ("kernel.py", "x"), "reference": None, "tolerances": {}, "timeout": 30.0,
    }  # fmt: skip
    for name, value in changed.items():
        assert name in SCORED_FIELDS
        assert task_digest(dataclasses.replace(task, **{name: value}), tmp_path) != before, name


def test_unchanged_by_skip(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task()
    before = task_digest(load_one(tmp_path), tmp_path)
    triton_task(skip="needs FP8 hardware")
    assert task_digest(load_one(tmp_path), tmp_path) == before


def test_a_task_without_timeout_keeps_its_older_digest(
    triton_task: WriteTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    triton_task()
    task = load_one(tmp_path)
    now = task_digest(task, tmp_path)
    # The digest as it was computed before the timeout field existed.
    monkeypatch.setattr(digest, "SCORED_FIELDS", tuple(name for name in SCORED_FIELDS if name != "timeout"))
    assert task_digest(task, tmp_path) == now
    assert task_digest(dataclasses.replace(task, timeout=600.0), tmp_path) == now  # not scored here
    monkeypatch.undo()
    assert task_digest(dataclasses.replace(task, timeout=600.0), tmp_path) != now
