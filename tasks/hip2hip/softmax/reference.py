"""Row-wise softmax over the last dimension, computed in (at least) float32."""

import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(compute)
    e = torch.exp(xf - xf.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
