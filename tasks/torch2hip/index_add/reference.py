"""The operation to implement: rows of `src` summed into the rows of a zeroed output that `index` names."""

import torch


def index_add(src: torch.Tensor, index: torch.Tensor, buckets: int) -> torch.Tensor:
    compute = torch.promote_types(src.dtype, torch.float32)
    out = torch.zeros(buckets, src.shape[1], dtype=compute, device=src.device)
    return out.index_add_(0, index, src.to(compute)).to(src.dtype)
