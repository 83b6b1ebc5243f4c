"""Reference for gelu_and_mul: tanh-GELU of the gate half times the up half, in float32 (float64 for
float64 inputs), rounded once."""

import math

import torch


def gelu_and_mul(x):
    acc = torch.promote_types(x.dtype, torch.float32)
    n = x.shape[-1] // 2
    g, u = x[:, :n].to(acc), x[:, n:].to(acc)
    inner = math.sqrt(2.0 / math.pi) * (g + 0.044715 * g * g * g)
    return (0.5 * g * (1.0 + torch.tanh(inner)) * u).to(x.dtype)
