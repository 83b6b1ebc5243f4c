"""An entry whose return is declared ignored (`file:symbol -> ignored`): every output is an input
it writes in place, and what it returns is no output (AKA's kernels that fill a buffer and also
return it)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks
from arena.task.task import Entry

WriteTask = Callable[..., Path]
WRITTEN = [{"name": "x", "inplace": True}]


def test_the_declared_return_is_read_kept_and_shown(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(entry="kernel.py:softmax -> ignored", outputs=WRITTEN)
    (task,) = load_tasks(tmp_path)
    assert task.entry == Entry("kernel.py", "softmax", return_ignored=True)
    assert str(task.entry) == "kernel.py:softmax -> ignored"
    assert task_from_dict(task_to_dict(task)) == task


def test_an_entry_without_it_keeps_its_form(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(outputs=WRITTEN)
    (task,) = load_tasks(tmp_path)
    assert not task.entry.return_ignored and task_to_dict(task)["entry"] == "kernel.py:softmax"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        # An output the entry makes can only be what it returns.
        (dict(entry="kernel.py:softmax -> ignored"), "every output must be an input written in place"),
        # The reference returns what it does not write, always.
        (dict(outputs=WRITTEN, reference="reference.py:softmax -> ignored"), "must be 'file:symbol'"),
        (dict(entry="kernel.py:softmax ->ignored", outputs=WRITTEN), "must be 'file:symbol' or"),
    ],
)
def test_refused_where_it_cannot_mean_that(
    triton_task: WriteTask, tmp_path: Path, overrides: dict, message: str
) -> None:
    triton_task(**overrides)
    with pytest.raises(TaskDeclarationError, match=message):
        load_tasks(tmp_path)


def test_a_hip_launcher_returns_its_error_code(hip_task: WriteTask, tmp_path: Path) -> None:
    hip_task(entry="kernel.hip:launch_softmax -> ignored", outputs=WRITTEN)
    with pytest.raises(TaskDeclarationError, match="returns its error code"):
        load_tasks(tmp_path)
