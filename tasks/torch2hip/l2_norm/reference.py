"""The operation to implement: L2 normalisation of the rows of a 2-D tensor."""

import torch


def l2_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    return torch.nn.functional.normalize(x.to(compute), p=2.0, dim=-1, eps=eps).to(x.dtype)
