"""Inclusive prefix sum along the last dimension, exact (int64 sums, returned in x's dtype)."""

import torch


def inclusive_scan(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x.to(torch.int64), dim=-1).to(x.dtype)
