"""A dim the reference uses that no input's shape carries, but that the test divides an axis by to
size another input (vllm `triton_awq_dequantize`: `num_groups = K // group_size`, `scales` drawn
with num_groups rows), or multiplies an axis by (`num_tokens = batch * qlen`, or the sum of
`[qlen] * batch`): reference.py binds
it as the quotient, where it is exact in every case; the fixture's fake_scale runner edited to
scale by groups of columns."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.modules import load_module

SCALE_TASK = "triton2triton/vllm/fake_scale"
SCALE_ADDRESS = f"tasks/{SCALE_TASK}:fake_scale"
RUNNER = Path("tasks") / SCALE_TASK / "scripts" / "task_runner.py"


def _grouped(checkout: Path, shapes: str, draw: str = "groups = cols // group", size: str = "groups") -> None:
    """The runner's w: one weight per group of `group` columns, the reference repeating each (or,
    `draw` and `size` given, another w the reference reads with `group`)."""
    path = checkout / RUNNER
    text = path.read_text()
    use = "w.float().repeat_interleave(group)" if size == "groups" else "w.float()[::group]"
    for old, new in [
        ("    (4, 64),\n    (8, 256),\n    (16, 128),\n", shapes),
        ("def reference_scale(x, w, alpha):", "def reference_scale(x, w, alpha, group):"),
        ("(x.float() * w.float() * alpha)", f"(x.float() * {use} * alpha)"),
        ("for i, (rows, cols) in", "for i, (rows, cols, group) in"),
        ("            w = torch.rand(cols,", f"            {draw}\n            w = torch.rand({size},"),
        ("reference_scale(x, w, ALPHA)", "reference_scale(x, w, ALPHA, group)"),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


def test_a_dim_the_test_divides_an_axis_by_is_the_axes_quotient(checkout: Path, tmp_path: Path) -> None:
    _grouped(checkout, "    (4, 64, 16),\n    (8, 256, 32),\n    (16, 128, 64),\n")
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SCALE_TASK].address == SCALE_ADDRESS, outcomes[SCALE_TASK].reason
    task = load_task(out, SCALE_ADDRESS)
    assert [(t.name, t.shape) for t in task.inputs] == [("x", ("rows", "cols")), ("w", ("groups",))]
    text = (out / "tasks" / SCALE_TASK / "reference.py").read_text()
    assert "group = x.shape[1] // w.shape[0]" in text
    reference = load_module(out / "tasks" / SCALE_TASK / "reference.py")
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.rand(4) + 0.5
    want = (x.float() * w.repeat_interleave(16) * 0.5).to(torch.float16)
    assert torch.equal(reference.reference(x, w, alpha=0.5), want)


@pytest.mark.parametrize(
    "draw",
    [
        "wide = cols * group",
        # vllm `triton_rejection_random_sample`: `num_draft_per_req = [max_draft] * batch_size`,
        # then `total_tokens = sum(num_draft_per_req)` sizes the drafts, the reference reading max_draft
        "counts = [group] * cols\n            wide = sum(counts)",
    ],
)
def test_a_dim_the_test_multiplies_an_axis_by_is_the_product_s_quotient(
    checkout: Path, tmp_path: Path, draw: str
) -> None:
    """vllm `triton_prompt_logprobs_token_ids`: `num_tokens = batch * qlen`, the reference reading
    qlen: here `wide = cols * group` (or the sum of `[group] * cols`), w drawn with `wide`
    elements, bound as `group = w.shape[0] // x.shape[1]`."""
    _grouped(checkout, "    (4, 64, 2),\n    (8, 256, 3),\n    (16, 128, 2),\n", draw, "wide")
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SCALE_TASK].address == SCALE_ADDRESS, outcomes[SCALE_TASK].reason
    assert "group = w.shape[0] // x.shape[1]" in (out / "tasks" / SCALE_TASK / "reference.py").read_text()
    reference = load_module(out / "tasks" / SCALE_TASK / "reference.py")
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.rand(192) + 0.5
    want = (x.float() * w[::3] * 0.5).to(torch.float16)
    assert torch.equal(reference.reference(x, w, alpha=0.5), want)


def test_a_dim_that_does_not_divide_the_axis_in_some_case_is_not_bound(checkout: Path, tmp_path: Path) -> None:
    """cols 100 by group 32: 100 // (100 // 32) is 33, not 32; the reference cannot recover it."""
    _grouped(checkout, "    (4, 64, 16),\n    (8, 100, 32),\n    (16, 128, 64),\n")
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert outcomes[SCALE_TASK].reason == (
        "the reference uses 'group', a dim no input's shape carries, and the kernel is not given it"
    )
