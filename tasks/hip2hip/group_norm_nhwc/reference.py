"""GroupNorm with 32 groups over channels-last (N, HW, C) activations, in (at least) float32 with a
two-pass variance, rounded once to x's dtype."""

import torch

GROUPS = 32


def group_norm_nhwc(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    N, HW, C = x.shape
    xf = x.to(compute).view(N, HW, GROUPS, C // GROUPS)
    mean = xf.mean(dim=(1, 3), keepdim=True)
    var = (xf - mean).pow(2).mean(dim=(1, 3), keepdim=True)
    y = ((xf - mean) * torch.rsqrt(var + eps)).view(N, HW, C)
    return (y * weight.to(compute) + bias.to(compute)).to(x.dtype)
