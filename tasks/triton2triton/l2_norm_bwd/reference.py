"""Reference for l2_norm_bwd: the gradient of x / max(||x||, 1e-12) over rows, in float32 (float64 for
float64 inputs)."""

import torch

EPS = 1e-12


def l2_norm_bwd(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    acc = torch.promote_types(x.dtype, torch.float32)
    dyf, xf = dy.to(acc), x.to(acc)
    n = (xf * xf).sum(dim=-1, keepdim=True).sqrt()
    dot = (xf * dyf).sum(dim=-1, keepdim=True)
    safe = n.clamp_min(EPS)
    dx = torch.where(n > EPS, dyf / safe - xf * dot / (safe * safe * safe), dyf / EPS)
    return dx.to(dy.dtype)
