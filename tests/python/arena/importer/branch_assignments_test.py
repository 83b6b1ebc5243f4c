"""An `if` whose two branches each assign one name, read as one assignment merged where the two
differ (arena.importer.branch_assignments; vLLM's `triton_scaled_mm`: `scale_a` drawn [M, 1] or
[1, 1] by `per_tok_a`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena.importer.branch_assignments import merge_branch_assignments
from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_runner import runner_text, scale_task_copy

TASK = "triton2triton/vllm/fake_remaining"
SHAPES = [(8, True), (16, False)]
KERNEL = '''"""A fake kernel file: what is left of each length."""
import torch


def remaining(lens: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
    return (lens - done).clamp(min=0)
'''
RUNNER = runner_text(
    "fake_remaining",
    """
def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (n, is_prefill) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        if is_prefill:
            lens = torch.full((n,), 100, dtype=torch.int32, device=device)
            done = torch.zeros(n, dtype=torch.int32, device=device)
        else:
            lens = torch.full((n,), 10, dtype=torch.int32, device=device)
            done = torch.full((n,), 50, dtype=torch.int32, device=device)
        result = mod.remaining(lens, done)
        ref = (lens - done).clamp(min=0)
        if not torch.equal(result, ref):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)


def _merged(source: str) -> str:
    return "\n".join(ast.unparse(node) for node in merge_branch_assignments(ast.parse(source).body))


def test_a_draw_whose_size_alone_depends_on_the_case_stays_one_draw() -> None:
    source = (
        "if per_tok_a:\n"
        "    scale_a = torch.rand(M, 1, device=device, dtype=torch.float32) * 2 + 0.5\n"
        "else:\n"
        "    scale_a = torch.rand(1, 1, device=device, dtype=torch.float32) * 2 + 0.5\n"
    )
    assert _merged(source) == (
        "scale_a = torch.rand(M if per_tok_a else 1, 1, device=device, dtype=torch.float32) * 2 + 0.5"
    )


def test_values_are_merged_as_deep_as_their_trees_agree() -> None:
    assert _merged("if c:\n    x = a\nelse:\n    x = b + 1\n") == "x = a if c else b + 1"
    # the same call of another function: the reading refuses it as any value it does not draw
    assert _merged("if c:\n    x = torch.randn(n)\nelse:\n    x = torch.zeros(n)\n") == (
        "x = (torch.randn if c else torch.zeros)(n)"
    )


@pytest.mark.parametrize(
    "source",
    [
        "if c:\n    x = a\nelse:\n    y = b\n",  # two names
        "if c:\n    x = a\n    z = 1\nelse:\n    x = b\n",  # a branch of two statements
        "if c:\n    x = a\n",  # no else
        "if f(c):\n    x = a\nelse:\n    x = b\n",  # a test that calls: evaluated once, as written
    ],
)
def test_anything_else_is_left_as_it_is(source: str) -> None:
    assert _merged(source) == ast.unparse(ast.parse(source))


def test_branches_of_several_assignments_are_merged_name_by_name() -> None:
    """vLLM's `triton_prepare_mrope_positions`: two fills per branch, `zeros` beside `full`."""
    source = (
        "if is_prefill:\n"
        "    lens = torch.full((n,), max_len, dtype=torch.int32)\n"
        "    done = torch.zeros(n, dtype=torch.int32)\n"
        "else:\n"
        "    lens = torch.full((n,), 10, dtype=torch.int32)\n"
        "    done = torch.full((n,), 50, dtype=torch.int32)\n"
    )
    assert _merged(source) == (
        "lens = torch.full((n,), max_len if is_prefill else 10, dtype=torch.int32)\n"
        "done = torch.full((n,), 0 if is_prefill else 50, dtype=torch.int32)"
    )
    # ones, and the size given as a tuple, either branch first
    assert _merged("if c:\n    x = torch.full((a, b), 3, dtype=d)\nelse:\n    x = torch.ones((a, b), dtype=d)\n") == (
        "x = torch.full((a, b), 3 if c else 1, dtype=d)"
    )


@pytest.mark.parametrize(
    "source",
    [
        "if c:\n    x = a\n    y = x\nelse:\n    x = b\n    y = x\n",  # one reads what another assigns
        "if c:\n    x = a\n    y = b\nelse:\n    y = b\n    x = a\n",  # the names in another order
    ],
)
def test_several_assignments_that_depend_on_their_order_are_left_as_they_are(source: str) -> None:
    assert _merged(source) == ast.unparse(ast.parse(source))


def test_zeros_without_a_dtype_is_not_read_as_full() -> None:
    """`torch.full((n,), 0)` is int64 where `torch.zeros(n)` is float32: not the same tensor."""
    assert _merged("if c:\n    x = torch.zeros(n)\nelse:\n    x = torch.full((n,), 5)\n") == (
        "x = torch.zeros(n) if c else torch.full((n,), 5)"
    )


def test_a_task_whose_case_picks_two_fills_imports_each_as_a_constant_by_case(checkout: Path, tmp_path: Path) -> None:
    scale_task_copy(checkout, TASK, "remaining", KERNEL, RUNNER.replace("SHAPES_HERE", repr(SHAPES)))
    out = tmp_path / "out"
    [outcome] = [o for o in import_checkout(checkout, out) if o.source == TASK]
    assert outcome.address == f"tasks/{TASK}:fake_remaining", outcome.reason
    task = load_task(out, outcome.address)
    assert [(t.name, t.dist.kind, t.dist.params) for t in task.inputs] == [
        ("lens", "constant", {"value": 100.0}),
        ("done", "constant", {"value": 0.0}),
    ]
    assert [{k: d.params for k, d in c.dists.items()} for c in task.cases] == [
        {},
        {"lens": {"value": 10.0}, "done": {"value": 50.0}},
    ]
