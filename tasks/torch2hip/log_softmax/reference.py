"""The operation to implement: log-softmax over the last dimension of 2-D logits, as float32."""

import torch


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    return torch.log_softmax(x.to(compute), dim=-1)
