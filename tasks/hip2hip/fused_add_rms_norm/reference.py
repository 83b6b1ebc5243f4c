"""Residual add (rounded to the input dtype), then RMSNorm of the rounded sum in (at least) float32."""

import torch


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float):
    compute = torch.promote_types(x.dtype, torch.float32)
    r = (x.to(compute) + residual.to(compute)).to(x.dtype)
    rf = r.to(compute)
    inv_rms = torch.rsqrt(rf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (rf * inv_rms * weight.to(compute)).to(x.dtype), r
