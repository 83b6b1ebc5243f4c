"""A transposed draw (geak_eval `gemm`'s `w = torch.randn((K, N)).T`, an [N, K] weight): the same
distribution on the transposed shape, its axes named in the transposed order; arena draws it
contiguous. A draw laid out by position (an arange) stays refused. The fixture's fake_scale task is
copied as fake_linear, its runner drawing the weight transposed."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.harness.inputs import make_inputs
from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_refusal import refusal
from arena_testing.aka_runner import runner_text, scale_task_copy
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_linear"
ADDRESS = f"tasks/{TASK}:fake_linear"
SHAPES = [(4, 16, 8), (2, 32, 24)]

KERNEL = '''"""A fake kernel file: x @ w.T, w an [n, k] weight."""
import torch


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.T
'''

RUNNER = runner_text(
    "fake_linear",
    """
def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (m, k, n) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(m, k, device=device)
        w = torch.randn((k, n), device=device).T
        result = mod.linear(x, w)
        ref = torch.nn.functional.linear(x, w)
        if not torch.allclose(result, ref, atol=1e-5, rtol=1e-5):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)


def _linear_task(checkout: Path, runner: str = RUNNER) -> None:
    scale_task_copy(checkout, TASK, "linear", KERNEL, runner.replace("SHAPES_HERE", repr(SHAPES)))


@pytest.mark.parametrize(
    "drawn",
    [
        "torch.randn((k, n), device=device).T",
        "torch.randn(k, n, device=device).t()",
        "torch.randn(k, n, device=device).transpose(0, 1)",
        "torch.transpose(torch.randn(k, n, device=device), -1, -2).contiguous()",
    ],
)
def test_a_transposed_draw_is_that_draw_of_the_transposed_shape(checkout: Path, tmp_path: Path, drawn: str) -> None:
    _linear_task(checkout, RUNNER.replace("torch.randn((k, n), device=device).T", drawn))
    out = tmp_path / "out"
    [outcome] = [o for o in import_checkout(checkout, out) if o.source == TASK]
    assert outcome.address == ADDRESS, outcome.reason
    task = load_task(out, ADDRESS)
    assert [(t.name, t.shape, t.dist.kind) for t in task.inputs] == [
        ("x", ("m", "k"), "normal"),
        ("w", ("n", "k"), "normal"),
    ]
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case, (m, k, n) in zip(task.cases, SHAPES):
        x, w = make_inputs(task, case, torch.device("cpu"))
        assert x.shape == (m, k) and w.shape == (n, k)
        assert torch.allclose(reference.reference(x, w), x @ w.T)


def test_a_transposed_arange_is_refused(checkout: Path) -> None:
    _linear_task(
        checkout, RUNNER.replace("torch.randn((k, n), device=device).T", "torch.arange(k * n).reshape(k, n).T")
    )
    assert "which no arena distribution matches" in refusal(checkout, TASK)
