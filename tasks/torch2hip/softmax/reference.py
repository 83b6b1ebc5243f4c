"""The operation to implement: softmax over the last dimension of a 2-D tensor."""

import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    return torch.softmax(x.to(compute), dim=-1).to(x.dtype)
