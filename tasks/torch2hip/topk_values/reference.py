"""The operation to implement: the k largest values of each row, largest first (a router's top-k)."""

import torch


def topk_values(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.topk(x, k, dim=-1, largest=True, sorted=True).values
