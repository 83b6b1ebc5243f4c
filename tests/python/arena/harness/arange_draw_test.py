"""An arange with a period (a range per row, `offsets[b, j] = j`) or a divisor (pages) drawn through the real draw code:
the judge's sets (families.make_families), the worker's (families.inputs_for, also the fresh
device sets of timed calls) and the fast tier's (inputs.make_inputs) are one function."""

from dataclasses import replace

import pytest
import torch

from arena.harness.device import Device
from arena.harness.families import inputs_for, make_families
from arena.harness.inputs import make_inputs
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")


def _task(tmp_path, period):
    return replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("offsets", ("B", "W"), "int32", Distribution("arange", {"period": period})),
            TensorSpec("positions", ("T",), "int64", Distribution("arange", {"period": "Q", "start": 2, "step": 3})),
        ),
        cases=(Case("c", {"B": 3, "W": 5, "T": 12, "Q": 4}, "float32", 1, timed=True),),
    )


@pytest.mark.parametrize("period", ["W", 5])
def test_an_arange_with_a_period_starts_over_each_row(tmp_path, period):
    task = _task(tmp_path, period)
    case = task.cases[0]
    offsets, positions = make_inputs(task, case, CPU)
    assert offsets.dtype == torch.int32 and offsets.tolist() == [[0, 1, 2, 3, 4]] * 3
    assert positions.tolist() == [2 + 3 * (i % 4) for i in range(12)]
    judge = make_families(task, 7, 1, Device("cpu", 0, CPU), timed=True)
    for member in judge[0]:  # the case, its hidden copy, the timing-only sets: no draw, the same values
        assert torch.equal(member.inputs[0], offsets) and torch.equal(member.inputs[1], positions)
    for fresh in (False, True):  # the worker's set, and a timed call's fresh set
        worker = inputs_for(task, case, 12345, CPU, fresh=fresh)
        assert torch.equal(worker[0], offsets) and torch.equal(worker[1], positions)


def test_an_arange_without_a_period_counts_over_the_whole_tensor(tmp_path):
    task = _task(tmp_path, "W")
    task = replace(task, inputs=(replace(task.inputs[0], dist=Distribution("arange")),))
    (offsets,) = make_inputs(task, task.cases[0], CPU)
    assert offsets.flatten().tolist() == list(range(15))


def test_an_arange_with_a_divisor_repeats_each_value(tmp_path):
    """`req_to_tokens[b, pos] = b * pages + pos // page_size`, rows of pages * page_size; after a
    period the divisor applies within each row."""
    task = _task(tmp_path, "W")
    pages = Distribution("arange", {"divisor": "D"})
    within = Distribution("arange", {"period": "W", "divisor": 2, "start": 1})
    task = replace(task, inputs=(replace(task.inputs[0], dist=pages), replace(task.inputs[0], name="w", dist=within)))
    case = replace(task.cases[0], dims={"B": 3, "W": 6, "D": 3})
    table, rows = make_inputs(task, case, CPU)
    assert table.tolist() == [[2 * b + j // 3 for j in range(6)] for b in range(3)]
    assert rows.tolist() == [[1 + j // 2 for j in range(6)]] * 3
    assert torch.equal(inputs_for(task, case, 99, CPU, fresh=True)[0], table)
