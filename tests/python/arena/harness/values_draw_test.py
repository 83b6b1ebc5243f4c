"""A literal input (`values`, arena/task/literal.py) made by the real draw code: the declared
values in the input's dtype and shape, whatever the seed, so a hidden copy of a case (a fresh
seed) gets the same values; a case's own literal through `dists` replaces the declared one."""

from dataclasses import replace

import torch

from arena.harness.families import inputs_for
from arena.harness.inputs import hidden_cases, make_inputs
from arena.task import literal
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")


def _values(values):
    """The distribution as a declaration gives it (the loader's own parse)."""
    return literal.parse("inputs", {"kind": "values", "values": values}, "input")


def _task(tmp_path, dtype="int32", values=(8, 12, 6), shape=("B",)):
    return replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("x", ("N", "D"), "float32", Distribution("normal", {})),
            TensorSpec("lengths", shape, dtype, _values(list(values))),
        ),
        cases=(
            Case("c", {"N": 26, "D": 4, "B": 3}, "float32", 3, timed=True),
            Case(
                "d",
                {"N": 48, "D": 4, "B": 2},
                "float32",
                4,
                dists={"lengths": _values([32, 16])},
            ),
        ),
    )


def test_the_input_is_the_declared_values(tmp_path):
    task = _task(tmp_path)
    x, lengths = make_inputs(task, task.cases[0], CPU)
    assert lengths.dtype == torch.int32 and lengths.is_contiguous()
    assert torch.equal(lengths, torch.tensor([8, 12, 6], dtype=torch.int32))
    _, other = make_inputs(task, task.cases[1], CPU)
    assert torch.equal(other, torch.tensor([32, 16], dtype=torch.int32))


def test_a_hidden_copy_and_another_seed_get_the_same_values(tmp_path):
    task = _task(tmp_path)
    (hidden,) = hidden_cases(task.cases[0], 1234, 1)
    x, lengths = make_inputs(task, task.cases[0], CPU)
    hx, hidden_lengths = make_inputs(task, hidden, CPU)
    assert not torch.equal(x, hx)  # the drawn input is drawn again
    assert torch.equal(hidden_lengths, lengths)
    again = inputs_for(task, task.cases[0], 99, CPU)
    assert torch.equal(again[1], lengths)


def test_a_two_dim_float_literal_keeps_its_rows_and_rounds_as_torch_tensor_does(tmp_path):
    values = [[0.1, 1.5], [-2.0, 3.0], [4.0, 65504.0]]
    task = _task(tmp_path, "float16", values, ("B", 2))
    _, table = make_inputs(task, task.cases[0], CPU)
    assert table.shape == (3, 2) and torch.equal(table, torch.tensor(values, dtype=torch.float16))


def test_large_integers_stay_exact(tmp_path):
    values = [2**62 + 1, -(2**53) - 1, 7]
    task = _task(tmp_path, "int64", values)
    _, big = make_inputs(task, task.cases[0], CPU)
    assert big.tolist() == values
