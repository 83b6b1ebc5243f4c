"""An `if` whose two branches each assign one name, read as one assignment merged where the two
differ (arena.importer.branch_assignments; vLLM's `triton_scaled_mm`: `scale_a` drawn [M, 1] or
[1, 1] by `per_tok_a`)."""

from __future__ import annotations

import ast

import pytest

from arena.importer.branch_assignments import merge_branch_assignments


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
