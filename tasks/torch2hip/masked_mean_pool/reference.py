"""The operation to implement: the mean over the valid (unpadded) positions of each sequence."""

import torch


def masked_mean_pool(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    valid = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]  # (B, S)
    total = torch.where(valid[:, :, None], x.to(compute), 0).sum(dim=1)  # (B, H)
    return (total / lengths[:, None].to(compute)).to(x.dtype)
