"""A draw mapped after it is made (task/mapped.py: `then` and `normalize`) drawn through the real
draw code: the judge's sets (families.make_families), the worker's (families.inputs_for, also the
fresh device sets of timed calls) and the fast tier's (inputs.make_inputs)."""

from dataclasses import replace
from typing import Any

import torch

from arena.harness import inputs as drawing
from arena.harness.device import Device
from arena.harness.families import inputs_for, make_families
from arena.harness.inputs import make_inputs
from arena.task import mapped
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")


def _mapped(kind: str, **params: Any) -> Distribution:
    return Distribution(kind, params)  # `then` is a list, which Distribution's params type leaves out


GATES = _mapped("normal", then=["sigmoid", "log"])  # AKA's torch.randn(...).sigmoid().log()
BETA = _mapped("uniform", then=["sigmoid"])
PROBS = _mapped("uniform", normalize=-1)  # p = torch.rand(...); p = p / p.sum(-1, keepdim=True)
SOFT = _mapped("normal", std=2.0, then=["exp"], normalize=0)  # a softmax down the columns


def _task(tmp_path):
    return replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("g", ("B", "T"), "float32", GATES),
            TensorSpec("beta", ("B", "T"), "float16", BETA),
            TensorSpec("p", ("B", "V"), "$dtype", PROBS),
            TensorSpec("s", ("V", "B"), "float64", SOFT),
        ),
        cases=(Case("c", {"B": 64, "T": 100, "V": 500}, "float32", 1, timed=True),),
    )


def test_the_maps_are_applied_to_the_draw_in_order(tmp_path):
    task = _task(tmp_path)
    g, beta, p, s = make_inputs(task, task.cases[0], CPU)
    assert g.dtype == torch.float32 and beta.dtype == torch.float16 and s.dtype == torch.float64
    plain = replace(task, inputs=(replace(task.inputs[0], dist=Distribution("normal")),))
    (drawn,) = make_inputs(plain, task.cases[0], CPU)  # the same seed: the draw under the maps
    assert torch.equal(g, torch.log(torch.sigmoid(drawn)))
    assert (g < 0).all() and g.isfinite().all() and -1.0 < g.mean().item() < -0.6  # E[log sigmoid(N(0, 1))] ~ -0.81
    assert (beta >= 0.5).all() and (beta <= torch.sigmoid(torch.tensor(1.0))).all()


def test_normalized_values_sum_to_1_along_the_axis(tmp_path):
    task = _task(tmp_path)
    first = make_inputs(task, task.cases[0], CPU)
    _, _, p, s = first
    assert p.shape == (64, 500) and (p >= 0).all()
    assert torch.allclose(p.sum(-1), torch.ones(64), atol=1e-5)
    assert torch.allclose(s.sum(0), torch.ones(64, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(s.log().diff(dim=0).std(), torch.tensor(2.0 * 2**0.5, dtype=torch.float64), rtol=0.05)
    again = make_inputs(task, task.cases[0], CPU)  # deterministic for a seed
    assert all(torch.equal(a, b) for a, b in zip(again, first))
    other = make_inputs(task, replace(task.cases[0], seed=2), CPU)
    assert not torch.equal(other[2], p)


def test_the_judge_and_the_worker_draw_the_same_mapped_values(tmp_path):
    task = _task(tmp_path)
    case = task.cases[0]
    judge = make_families(task, 7, 1, Device("cpu", 0, CPU), timed=True)
    for member in judge[0]:  # the case, its hidden copy, the timing-only sets: each mapped
        assert (member.inputs[0] < 0).all() and torch.allclose(member.inputs[2].sum(-1), torch.ones(64))
        worker = inputs_for(task, case, member.case.seed, CPU)
        assert all(torch.equal(w, j) for w, j in zip(worker, member.inputs))
    fresh = inputs_for(task, case, 12345, CPU, fresh=True)
    assert (fresh[0] < 0).all() and torch.allclose(fresh[3].sum(0), torch.ones(64, dtype=torch.float64))


def test_every_declared_map_is_drawn():
    assert set(drawing._MAPS) == set(mapped.MAPS)
