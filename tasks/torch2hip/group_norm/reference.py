"""The operation to implement: group normalisation of (B, C, S) feature maps, with weight and bias."""

import torch


def group_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_groups: int, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    y = torch.nn.functional.group_norm(x.to(compute), num_groups, weight.to(compute), bias.to(compute), eps)
    return y.to(x.dtype)
