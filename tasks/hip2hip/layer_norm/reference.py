"""LayerNorm over the last dimension, computed in (at least) float32, rounded once to x's dtype."""

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(compute)
    mean = xf.mean(dim=-1, keepdim=True)
    centered = xf - mean
    var = centered.pow(2).mean(dim=-1, keepdim=True)
    return (centered * torch.rsqrt(var + eps) * weight.to(compute) + bias.to(compute)).to(x.dtype)
