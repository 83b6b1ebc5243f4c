"""Log-sum-exp of each row of a matrix, in (at least) float32."""

import torch


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    return torch.logsumexp(x.to(compute), dim=-1)
