"""A check of where an output holds special values, then of the rest (vLLM's
`triton_apply_grammar_bitmask`: its -inf positions compared as masks, the other elements within a
tolerance), read as one comparison of the whole output (arena.importer.special_values). The
fixture's fake_scale task is copied as fake_neginf, its kernel writing -inf below a threshold."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_refusal import refusal
from arena_testing.aka_runner import runner_text, scale_task_copy

TASK = "triton2triton/vllm/fake_neginf"
ADDRESS = f"tasks/{TASK}:fake_neginf"
SHAPES = [(8, 16), (32, 64)]

KERNEL = '''"""A fake kernel file: the first rows of logits below -1 set to -inf, in place."""
import torch


def mask_low(logits: torch.Tensor, n: int) -> None:
    logits[:n][logits[:n] < -1] = float("-inf")
'''

RUNNER = runner_text(
    "fake_neginf",
    """
def reference_mask(logits, n):
    out = logits.clone()
    out[:n][out[:n] < -1] = float("-inf")
    return out


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (n, vocab) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        logits = torch.randn(n + 4, vocab, device=device)
        got = logits.clone()
        mod.mask_low(got, n)
        ref = reference_mask(logits.cpu(), n)
        ref_neginf = ref.isinf() & (ref < 0)
        got_neginf = got.cpu().isinf() & (got.cpu() < 0)
        if not torch.equal(ref_neginf[:n], got_neginf[:n]):
            return False, f"Shape {i + 1}: -inf positions differ"
        keep = ~ref_neginf[:n]
        if not torch.allclose(got.cpu()[:n][keep], ref[:n][keep], atol=1e-6, rtol=1e-6):
            return False, f"Shape {i + 1}: values differ"
    return True, None
""",
)


def _neginf_task(checkout: Path, runner: str = RUNNER) -> None:
    scale_task_copy(checkout, TASK, "mask_low", KERNEL, runner.replace("SHAPES_HERE", repr(SHAPES)))


def test_the_special_values_and_the_rest_checked_are_one_comparison_of_the_whole(
    checkout: Path, tmp_path: Path
) -> None:
    _neginf_task(checkout)
    out = tmp_path / "out"
    [outcome] = [o for o in import_checkout(checkout, out) if o.source == TASK]
    assert outcome.address == ADDRESS, outcome.reason
    task = load_task(out, ADDRESS)
    assert [(o.name, o.inplace) for o in task.outputs] == [("got", True)]
    text = (out / "tasks" / TASK / "reference.py").read_text()
    assert "got[:n] = (ref[:n]).to(" in text, text
    assert "'float32': {'atol': 1e-06, 'rtol': 1e-06}" in (out / "tasks" / TASK / "BUILD").read_text()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("got_neginf = got.cpu().isinf()", "got_neginf = got.cpu().isnan()"),  # not the same mask
        ("keep = ~ref_neginf[:n]", "keep = ~ref_neginf[:2]"),  # the rest of another part
        ("keep = ~ref_neginf[:n]\n", "keep = ~ref_neginf[:n]\n        print(keep)\n"),  # read elsewhere
    ],
)
def test_other_checks_of_part_of_the_output_stay_refused(checkout: Path, old: str, new: str) -> None:
    assert old in RUNNER
    _neginf_task(checkout, RUNNER.replace(old, new))
    assert "does not compare one whole output" in refusal(checkout, TASK)
