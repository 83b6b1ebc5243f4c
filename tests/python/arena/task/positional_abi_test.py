"""A Python entry's abi: its positional parameters in order (AKA's `f(x, n, y)`, a tensor after a
number), every input once and the scalars before or between them; the loader turns it into the
entry's `positional`, and the codec keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]
TWO_INPUTS = [
    {"name": "x", "shape": ["M", "N"], "dtype": "$dtype"},
    {"name": "w", "shape": ["M", "N"], "dtype": "$dtype"},
]


def test_the_abi_orders_the_positional_arguments(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(inputs=TWO_INPUTS, scalars={"n": "N", "eps": 0.5}, abi=["x", "n", "w"])
    (task,) = load_tasks(tmp_path)
    assert task.abi == ("x", "n", "w") and task.entry.positional == (0, "n", 1)
    assert str(task.entry) == "kernel.py:softmax"  # the entry's text is unchanged
    assert task_from_dict(task_to_dict(task)) == task


def test_without_an_abi_inputs_come_first(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(inputs=TWO_INPUTS, scalars={"n": "N"})
    (task,) = load_tasks(tmp_path)
    assert task.abi == () and task.entry.positional == ()
    assert task_from_dict(task_to_dict(task)) == task


def test_the_reference_is_called_as_before(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(inputs=TWO_INPUTS, scalars={"n": "N"}, abi=["x", "n", "w"], reference="kernel.py:softmax")
    (task,) = load_tasks(tmp_path)
    assert task.reference is not None and task.reference.positional == ()


@pytest.mark.parametrize(
    ("abi", "message"),
    [
        (["x", "n"], "input 'w' is not in the abi"),
        (["x", "n", "w", "M"], "'M' is not an input or a scalar"),
        (["x", "n", "w", "x"], "has duplicates: \\['x'\\]"),
        (["x", "y", "w"], "'y' is not an input or a scalar"),
    ],
)
def test_an_abi_that_cannot_order_the_call_is_refused(
    triton_task: WriteTask, tmp_path: Path, abi: list[str], message: str
) -> None:
    triton_task(inputs=TWO_INPUTS, scalars={"n": "N"}, abi=abi)
    with pytest.raises(TaskDeclarationError, match=message):
        load_tasks(tmp_path)
