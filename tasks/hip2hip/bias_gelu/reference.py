"""Bias + GELU (tanh approximation), computed in (at least) float32, rounded once to x's dtype."""

import torch


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    v = x.to(compute) + bias.to(compute)
    return torch.nn.functional.gelu(v, approximate="tanh").to(x.dtype)
