"""RMSNorm over the last dimension, computed in (at least) float32, rounded once to x's dtype."""

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(compute)
    inv_rms = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (xf * inv_rms * weight.to(compute)).to(x.dtype)
