"""Histogram of integer values into `bins` counters; values outside [0, bins) are not counted."""

import torch


def histogram(x: torch.Tensor, bins: int) -> torch.Tensor:
    values = x[(x >= 0) & (x < bins)].long()
    return torch.bincount(values, minlength=bins).to(torch.int32)
