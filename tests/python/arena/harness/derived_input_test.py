"""An input computed from another (`cumsum_of`) made by the real draw code: the running sums of
the source's values as the entry gets them, on every path that makes inputs (make_inputs; the
judge's and the worker's sets go through it)."""

from dataclasses import replace

import torch

from arena.harness.families import inputs_for
from arena.harness.inputs import make_inputs
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")


def _task(tmp_path, dtype="float32"):
    return replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("dt", ("H", "L"), dtype, Distribution("uniform", {"low": 0.0, "high": 0.1})),
            TensorSpec("dA", ("H", "L"), dtype, Distribution("cumsum_of", {"input": "dt", "dim": -1, "scale": -0.1})),
        ),
        cases=(Case("c", {"H": 4, "L": 64}, "float32", 3, timed=True),),
    )


def test_the_derived_input_is_the_running_sums_of_its_source(tmp_path):
    task = _task(tmp_path)
    dt, dA = make_inputs(task, task.cases[0], CPU)
    assert torch.equal(dA, torch.cumsum(dt * -0.1, dim=-1))
    assert (dA <= 0).all() and dA.is_contiguous() and dA.dtype == torch.float32
    again = inputs_for(task, task.cases[0], 99, CPU)  # the worker's set of another seed: still related
    assert torch.equal(again[1], torch.cumsum(again[0] * -0.1, dim=-1)) and not torch.equal(again[0], dt)


def test_a_float16_source_is_summed_in_float32_then_cast(tmp_path):
    task = _task(tmp_path, "float16")
    dt, dA = make_inputs(task, task.cases[0], CPU)
    assert dA.dtype == torch.float16
    assert torch.equal(dA, torch.cumsum(dt.float() * -0.1, dim=-1).half())
