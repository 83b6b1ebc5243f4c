"""Reference for layer_norm_bwd, in float32 (float64 for float64 inputs)."""

import torch


def layer_norm_bwd(dy, x, weight, mean, rstd):
    acc = torch.promote_types(dy.dtype, torch.float32)
    dyf, xf, wf = dy.to(acc), x.to(acc), weight.to(acc)
    r = rstd.to(acc)[:, None]
    xhat = (xf - mean.to(acc)[:, None]) * r
    wdy = wf * dyf
    c1 = (xhat * wdy).mean(dim=-1, keepdim=True)
    c2 = wdy.mean(dim=-1, keepdim=True)
    dx = (wdy - (xhat * c1 + c2)) * r
    dw = (dyf * xhat).sum(dim=0)
    db = dyf.sum(dim=0)
    out = torch.promote_types(acc, torch.float32)
    return dx.to(dy.dtype), dw.to(out), db.to(out)
