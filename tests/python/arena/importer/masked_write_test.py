"""A masked write after the draw (vllm `triton_convert_req_to_global_index`'s `mask =
torch.rand(...) < 0.1; token_indices[mask] = -1`, `triton_num_nans`' `logits[nan_mask] =
float('nan')`): the draw's distribution with `masked` (the share) and `mask_value` (the value,
"nan" for a NaN). The fixture's fake_scale task is copied as fake_masked, its runner writing both."""

from __future__ import annotations

from pathlib import Path

import torch

from arena.harness.inputs import make_inputs
from arena.importer.importer import import_checkout
from arena_testing.aka_refusal import imported
from arena_testing.aka_runner import runner_text, scale_task_copy
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_masked"
ADDRESS = f"tasks/{TASK}:fake_masked"
SHAPES = [(64, 32, 16), (128, 64, 8)]

KERNEL = '''"""A fake kernel file: x's finite values summed per row, plus the -1s of idx counted."""
import torch


def count_masked(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return x.nan_to_num(0.0).sum(1) + (idx == -1).sum(1).float()
'''

RUNNER = runner_text(
    "fake_masked",
    """
def reference_masked(x, idx):
    return x.nan_to_num(0.0).sum(1) + (idx == -1).sum(1).float()


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (rows, q, width) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(rows, q, device=device)
        x[torch.rand(rows, q, device=device) < 0.05] = float('nan')
        idx = torch.randint(0, q, (rows, width), device=device, dtype=torch.int32)
        mask = torch.rand(rows, width, device=device) < 0.1
        idx[mask] = -1
        result = mod.count_masked(x, idx)
        torch.cuda.synchronize()
        ref = reference_masked(x, idx)
        if not torch.allclose(result, ref, atol=1e-5, rtol=1e-5):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)


def _masked_task(checkout: Path, runner: str = RUNNER) -> None:
    scale_task_copy(checkout, TASK, "count_masked", KERNEL, runner.replace("SHAPES_HERE", repr(SHAPES)))


def _outcome(checkout: Path, tmp_path: Path) -> str:
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    return outcomes[TASK].reason


def test_a_masked_write_after_the_draw_is_the_draw_with_masked_and_mask_value(checkout: Path, tmp_path: Path) -> None:
    _masked_task(checkout)
    out = tmp_path / "out"
    task = imported(checkout, out, TASK, ADDRESS)
    x, idx = task.inputs
    assert x.dist.kind == "normal" and x.dist.params == {"masked": 0.05, "mask_value": "nan"}
    assert idx.dtype == "int32" and idx.dist.kind == "randint"
    assert idx.dist.params == {"low": 0, "high": "q", "masked": 0.1, "mask_value": -1}
    text = (out / "tasks" / TASK / "BUILD").read_text()
    assert "'mask_value': 'nan'" in text and "'mask_value': -1" in text
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case, (rows, q, width) in zip(task.cases, SHAPES):
        drawn_x, drawn_idx = make_inputs(task, case, torch.device("cpu"))
        assert drawn_x.shape == (rows, q) and 0 < drawn_x.isnan().sum() < rows * q * 0.2
        assert 0 < (drawn_idx == -1).sum() < rows * width * 0.3 and drawn_idx.max() < q
        want = drawn_x.nan_to_num(0.0).sum(1) + (drawn_idx == -1).sum(1).float()
        assert torch.equal(reference.reference(drawn_x, drawn_idx), want)


def test_a_mask_the_test_reads_again_is_refused(checkout: Path, tmp_path: Path) -> None:
    """The reference reading the mask would need the elements the draw chose: no input carries them."""
    runner = RUNNER.replace("ref = reference_masked(x, idx)", "ref = reference_masked(x, idx) + mask.sum(1)")
    _masked_task(checkout, runner)
    reason = _outcome(checkout, tmp_path)
    assert reason.startswith("input 'idx' is changed after it is drawn (line"), reason


def test_a_mask_drawn_in_another_dtype_is_refused(checkout: Path, tmp_path: Path) -> None:
    _masked_task(checkout, RUNNER.replace("device=device) < 0.1", "device=device, dtype=torch.float16) < 0.1"))
    reason = _outcome(checkout, tmp_path)
    assert reason.startswith("input 'idx' is changed after it is drawn"), reason


def test_a_share_outside_zero_to_one_is_refused(checkout: Path, tmp_path: Path) -> None:
    _masked_task(checkout, RUNNER.replace("< 0.1", "< 1.5"))
    reason = _outcome(checkout, tmp_path)
    assert "the mask's share 1.5 is not strictly between 0 and 1" in reason, reason


def test_a_mask_of_another_shape_is_refused(checkout: Path, tmp_path: Path) -> None:
    _masked_task(checkout, RUNNER.replace("torch.rand(rows, q, device=device)", "torch.rand(rows, 1, device=device)"))
    reason = _outcome(checkout, tmp_path)
    assert "its mask" in reason and "is not of its shape in case 1" in reason, reason
