"""RMSNorm backward (dx, dweight) from the saved rstd, computed in (at least) float32."""

import torch


def rms_norm_bwd(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    compute = torch.promote_types(dy.dtype, torch.float32)
    dyf, xf, wf = dy.to(compute), x.to(compute), weight.to(compute)
    r = rstd.to(compute).unsqueeze(-1)
    xhat = xf * r
    g = dyf * wf
    proj = (g * xhat).mean(dim=-1, keepdim=True)
    dx = r * (g - xhat * proj)
    dweight = (dyf * xhat).sum(dim=0)
    return dx.to(dy.dtype), dweight.to(rstd.dtype)
