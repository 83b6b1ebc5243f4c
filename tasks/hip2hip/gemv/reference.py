"""Matrix-vector product y = w @ x, accumulated in (at least) float32, rounded once to w's dtype."""

import torch


def gemv(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(w.dtype, torch.float32)
    return torch.mv(w.to(compute), x.to(compute)).to(w.dtype)
