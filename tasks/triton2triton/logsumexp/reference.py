"""Reference for logsumexp: row-wise over the last dim, in float32 (float64 for float64 inputs)."""

import torch


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    acc = torch.promote_types(x.dtype, torch.float32)
    return torch.logsumexp(x.to(acc), dim=-1)
