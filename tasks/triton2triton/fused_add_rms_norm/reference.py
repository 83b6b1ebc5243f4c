"""Reference for fused_add_rms_norm: the residual sum rounded to the input dtype, then RMSNorm of
that sum in float32 (float64 for float64 inputs), rounded once."""

import torch


def fused_add_rms_norm(x, residual, weight, eps):
    acc = torch.promote_types(x.dtype, torch.float32)
    r = (x.to(acc) + residual.to(acc)).to(x.dtype)
    rf = r.to(acc)
    rstd = torch.rsqrt(rf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (rf * rstd * weight.to(acc)).to(x.dtype), r
