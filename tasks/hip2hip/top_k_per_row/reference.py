"""Top-k values and indices of each row, in descending order, ties broken by the lowest index."""

import torch


def top_k_per_row(logits: torch.Tensor, k: int):
    compute = torch.promote_types(logits.dtype, torch.float32)
    # A stable descending sort keeps equal values in index order.
    order = torch.sort(logits.to(compute), dim=-1, descending=True, stable=True).indices[:, :k]
    return logits.gather(1, order), order.to(torch.int32)
