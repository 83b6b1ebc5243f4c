"""Reference for histogram: counts of each value in [0, B) as int32."""

import torch


def histogram(x: torch.Tensor, B: int) -> torch.Tensor:
    return torch.bincount(x.long(), minlength=B).to(torch.int32)
