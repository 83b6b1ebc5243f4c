"""Reference for rms_norm_bwd, in float32 (float64 for float64 inputs)."""

import torch


def rms_norm_bwd(dy, x, weight, rstd):
    acc = torch.promote_types(dy.dtype, torch.float32)
    dyf, xf, wf = dy.to(acc), x.to(acc), weight.to(acc)
    r = rstd.to(acc)[:, None]
    xhat = xf * r
    g = wf * dyf
    dx = (g - xhat * (xhat * g).mean(dim=-1, keepdim=True)) * r
    dw = (dyf * xhat).sum(dim=0)
    return dx.to(dy.dtype), dw.to(torch.promote_types(acc, torch.float32))
