"""The running sums of a constant integer fill read as their arange (arena.importer.constant_sums):
vLLM's `triton_expand`, `cu = torch.cumsum(torch.full((B,), tpr, dtype=torch.int32), dim=0)`, and
its last value `int(cu[-1].item())` read back as `B * tpr`."""

from __future__ import annotations

import ast

import torch

from arena.importer.constant_sums import fold_constant_sums


def _folded(source: str) -> list[str]:
    return [ast.unparse(node) for node in fold_constant_sums(ast.parse(source).body)]


def test_a_cumsum_of_a_full_is_its_arange_and_its_last_value_the_product() -> None:
    folded = _folded(
        "counts = torch.full((B,), tpr, dtype=torch.int32, device=device)\n"
        "cu = torch.cumsum(counts, dim=0).to(torch.int32)\n"
        "num_tokens = int(cu[-1].item())\n"
    )
    assert folded[1:] == [
        "cu = (torch.arange(B, dtype=torch.int64, device=device) * tpr + tpr).to(torch.int32)",
        "num_tokens = B * tpr",
    ]
    # The same values as torch makes them, dtype included.
    B, tpr = 5, 3
    counts = torch.full((B,), tpr, dtype=torch.int32)
    assert torch.equal(torch.cumsum(counts, dim=0), torch.arange(B, dtype=torch.int64) * tpr + tpr)


def test_a_list_of_one_value_given_to_torch_tensor_is_the_same_fill() -> None:
    folded = _folded("per_req = [c] * n\ncu = torch.cumsum(torch.tensor(per_req, dtype=torch.int32), dim=0)\n")
    assert folded[1] == "cu = torch.arange(n, dtype=torch.int64) * c + c"


def test_what_is_not_exactly_a_constant_sum_is_left_as_it_is() -> None:
    kept = [
        # the fill is read elsewhere: the test uses its values
        "counts = torch.full((B,), t, dtype=torch.int32)\ncu = torch.cumsum(counts, dim=0)\ntotal = counts.sum()\n",
        # a float fill: its sums are floats, whose values the interpreter does not follow
        "counts = torch.full((B,), t)\ncu = torch.cumsum(counts, dim=0)\n",
        # a list given to torch.tensor without an integer dtype
        "per_req = [c] * n\ncu = torch.cumsum(torch.tensor(per_req), dim=0)\n",
        # summed along an axis of a 2-D fill
        "counts = torch.full((B, 2), t, dtype=torch.int32)\ncu = torch.cumsum(counts, dim=0)\n",
        # rebound between the fill and the sum
        "counts = torch.full((B,), t, dtype=torch.int32)\ncounts = x\ncu = torch.cumsum(counts, dim=0)\n",
    ]
    for source in kept:
        assert _folded(source) == [ast.unparse(node) for node in ast.parse(source).body], source
