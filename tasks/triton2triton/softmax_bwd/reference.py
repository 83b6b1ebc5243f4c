"""Reference for softmax_bwd: dx = y * (dy - sum(y * dy)) per row, in float32 (float64 for float64
inputs), rounded once."""

import torch


def softmax_bwd(y, dy):
    acc = torch.promote_types(y.dtype, torch.float32)
    yf, dyf = y.to(acc), dy.to(acc)
    return (yf * (dyf - (yf * dyf).sum(dim=-1, keepdim=True))).to(y.dtype)
