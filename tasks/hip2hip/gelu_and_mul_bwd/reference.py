"""Backward of out = gelu_tanh(gate) * up with x = [gate | up], in (at least) float32, rounded once."""

import math

import torch


def gelu_and_mul_bwd(x: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    d = dy.shape[-1]
    gate = x[:, :d].to(compute)
    up = x[:, d:].to(compute)
    g = dy.to(compute)
    k = math.sqrt(2.0 / math.pi)
    t = torch.tanh(k * (gate + 0.044715 * gate**3))
    gelu = 0.5 * gate * (1.0 + t)
    dgelu = 0.5 * (1.0 + t) + 0.5 * gate * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * gate * gate)
    return torch.cat([g * up * dgelu, g * gelu], dim=-1).to(x.dtype)
