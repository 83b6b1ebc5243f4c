"""Reference for rms_norm, in float32 (float64 for float64 inputs), rounded once at the end."""

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (xf * rstd * weight.to(acc)).to(x.dtype)
