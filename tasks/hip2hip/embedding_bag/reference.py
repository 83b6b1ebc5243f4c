"""EmbeddingBag (sum with per-sample weights), accumulated in (at least) float32, rounded once."""

import torch


def embedding_bag(idx: torch.Tensor, psw: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(weight.dtype, torch.float32)
    rows = weight[idx.long()].to(compute)  # (B, L, D)
    return (rows * psw.to(compute)[:, :, None]).sum(dim=1).to(weight.dtype)
