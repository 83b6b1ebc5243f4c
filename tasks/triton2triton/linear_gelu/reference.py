"""Reference for linear_gelu: gelu_tanh(x @ w + bias) in float32 (float64 for float64 inputs), rounded once."""

import torch


def linear_gelu(x, w, bias):
    acc = torch.promote_types(x.dtype, torch.float32)
    v = torch.matmul(x.to(acc), w.to(acc)) + bias.to(acc)
    return torch.nn.functional.gelu(v, approximate="tanh").to(x.dtype)
