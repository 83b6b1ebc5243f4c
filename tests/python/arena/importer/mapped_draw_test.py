"""Draws mapped after they are made (arena/task/mapped.py), as AKA's tests write them: vllm
`triton_fla_fused_recurrent`'s `g = torch.randn(...).sigmoid().log()` and `beta =
torch.rand(...).sigmoid()` (`then`), `triton_rejection_random_sample`'s `p = torch.rand(...); p = p
/ p.sum(-1, keepdim=True)` (`normalize`); and `triton_causal_conv1d_*`'s `s =
s.transpose(1, 2).contiguous().transpose(1, 2)` and `if w.stride(1) != 1: w = w.contiguous()`, the
same values laid out another way (arena hands inputs over contiguous). The fixture's fake_scale task
is copied as fake_gated, its runner drawing all of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.harness.inputs import make_inputs
from arena_testing.aka_refusal import imported, refused
from arena_testing.aka_runner import runner_text, scale_task_copy
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_gated"
ADDRESS = f"tasks/{TASK}:fake_gated"
SHAPES = [(4, 16, 8), (2, 32, 24)]

KERNEL = '''"""A fake kernel file: gated probabilities summed per row."""
import torch


def gated(g: torch.Tensor, beta: torch.Tensor, p: torch.Tensor, s: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (g.exp() * beta) @ p + s.sum(-1) + w.sum(-1, keepdim=True)
'''

RUNNER = runner_text(
    "fake_gated",
    """
def reference_gated(g, beta, p, s, w):
    return (g.exp() * beta) @ p + s.sum(-1) + w.sum(-1, keepdim=True)


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (m, k, n) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        g = torch.randn(m, k, device=device).sigmoid().log()
        beta = torch.sigmoid(torch.rand(m, k, device=device))
        p = torch.rand(k, n, device=device)
        p = p / p.sum(-1, keepdim=True)
        s = torch.randn(m, n, 3, device=device)
        s = s.transpose(1, 2).contiguous().transpose(1, 2)
        w = torch.randn(m, 2, device=device)
        if w.stride(1) != 1:
            w = w.contiguous()
        result = mod.gated(g, beta, p, s, w)
        ref = reference_gated(g, beta, p, s, w)
        if not torch.allclose(result, ref, atol=1e-5, rtol=1e-5):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)
DRAWN = "torch.randn(m, k, device=device).sigmoid().log()"
NORMALIZED = "p = p / p.sum(-1, keepdim=True)"


def _gated_task(checkout: Path, runner: str = RUNNER) -> None:
    scale_task_copy(checkout, TASK, "gated", KERNEL, runner.replace("SHAPES_HERE", repr(SHAPES)))


def test_mapped_and_normalized_draws_are_read_with_then_and_normalize(checkout: Path, tmp_path: Path) -> None:
    _gated_task(checkout)
    out = tmp_path / "out"
    task = imported(checkout, out, TASK, ADDRESS)
    assert [(t.name, t.shape, t.dist.kind, dict(t.dist.params)) for t in task.inputs] == [
        ("g", ("m", "k"), "normal", {"then": ["sigmoid", "log"]}),
        ("beta", ("m", "k"), "uniform", {"then": ["sigmoid"]}),
        ("p", ("k", "n"), "uniform", {"normalize": -1}),
        ("s", ("m", "n", 3), "normal", {}),  # its layout round trip: the same values, contiguous
        ("w", ("m", 2), "normal", {}),
    ]
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case in task.cases:
        g, beta, p, s, w = make_inputs(task, case, torch.device("cpu"))
        assert (g < 0).all() and (beta >= 0.5).all() and torch.allclose(p.sum(-1), torch.ones(p.shape[0]))
        assert torch.allclose(
            reference.reference(g, beta, p, s, w), (g.exp() * beta) @ p + s.sum(-1) + w.sum(-1, keepdim=True)
        )


@pytest.mark.parametrize(
    "old, new, message",
    [
        (DRAWN, "torch.randn(m, k, device=device).log()", "input 'g' then[0] takes the log of values down to -inf"),
        (DRAWN, "torch.randint(0, 9, (m, k), device=device).exp()", "input 'g' maps a randint draw"),
        (NORMALIZED, "p = p / p.sum(-1)", "input 'p' is `p / p.sum(-1)`, which no arena distribution matches"),
        (NORMALIZED, "p = p / p.sum(0, keepdim=True) - 1", "which no arena distribution matches"),
        ("p = torch.rand(k, n", "p = torch.randn(k, n", "input 'p' normalizes values down to -inf"),
        (".transpose(1, 2).contiguous().transpose(1, 2)", ".transpose(1, 2).contiguous()", "input 's' is `s.tr"),
        (".transpose(1, 2).contiguous().transpose(1, 2)", ".transpose(1, 2).transpose(2, 1).t()", "input 's' is `s."),
        ("w = w.contiguous()", "w = w * 2", "input 'w' is written by line"),
    ],
)
def test_what_no_map_or_layout_explains_is_refused(checkout: Path, old: str, new: str, message: str) -> None:
    assert old in RUNNER
    _gated_task(checkout, RUNNER.replace(old, new))
    assert message in str(refused(checkout, TASK))
