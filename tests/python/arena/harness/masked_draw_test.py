"""A masked write after the draw (`t[torch.rand(...) < p] = v`) drawn through the real draw code:
the judge's sets (families.make_families), the worker's (families.inputs_for, also the fresh
device sets of timed calls) and the fast tier's (inputs.make_inputs)."""

from dataclasses import replace

import torch

from arena.harness.device import Device
from arena.harness.families import inputs_for, make_families
from arena.harness.inputs import make_inputs
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")
INDICES = Distribution("randint", {"low": 0, "high": "H", "masked": 0.1, "mask_value": -1})
LOGITS = Distribution("normal", {"masked": 0.05, "mask_value": "nan"})


def _task(tmp_path):
    return replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("tokens", ("B", "K"), "int32", INDICES),
            TensorSpec("logits", ("B", "V"), "float16", LOGITS),
        ),
        cases=(Case("c", {"B": 64, "K": 100, "H": 50, "V": 500}, "float32", 1, timed=True),),
    )


def test_a_share_of_the_draw_is_set_to_the_value(tmp_path):
    task = _task(tmp_path)
    tokens, logits = make_inputs(task, task.cases[0], CPU)
    assert tokens.dtype == torch.int32 and logits.dtype == torch.float16
    set_to = (tokens == -1).float().mean().item()
    assert 0.08 < set_to < 0.12 and tokens[tokens != -1].min() >= 0 and tokens.max() < 50
    nans = logits.isnan().float().mean().item()
    assert 0.04 < nans < 0.06 and logits[~logits.isnan()].isfinite().all()
    assert 0.9 < logits[~logits.isnan()].float().std().item() < 1.1  # the normal draw under the mask
    again = make_inputs(task, task.cases[0], CPU)  # the same seed: the same elements chosen
    assert torch.equal(again[0], tokens) and _same(again[1], logits)


def test_the_mask_is_drawn_after_the_values_by_the_same_generator(tmp_path):
    """The unmasked elements are the plain draw's, element for element: the mask comes after it."""
    task = _task(tmp_path)
    plain = replace(task, inputs=(replace(task.inputs[0], dist=Distribution("randint", {"low": 0, "high": "H"})),))
    (tokens,) = make_inputs(replace(task, inputs=task.inputs[:1]), task.cases[0], CPU)
    (drawn,) = make_inputs(plain, task.cases[0], CPU)
    kept = tokens != -1
    assert torch.equal(tokens[kept], drawn[kept])


def _same(a, b):
    """Equal, NaN where NaN (torch.equal is False for any NaN)."""
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a[~a.isnan()], b[~b.isnan()])


def test_the_judge_and_the_worker_draw_the_same_masked_values(tmp_path):
    task = _task(tmp_path)
    case = task.cases[0]
    judge = make_families(task, 7, 1, Device("cpu", 0, CPU), timed=True)
    for member in judge[0]:  # the case, its hidden copy, the timing-only sets: each masked
        assert (member.inputs[0] == -1).any() and member.inputs[1].isnan().any()
        worker = inputs_for(task, case, member.case.seed, CPU)
        assert torch.equal(worker[0], member.inputs[0]) and _same(worker[1], member.inputs[1])
    fresh = inputs_for(task, case, 12345, CPU, fresh=True)
    assert (fresh[0] == -1).any() and fresh[1].isnan().any()
