"""Reference for log_softmax: x - logsumexp(x) per row, in float32 (float64 for float64 inputs)."""

import torch


def log_softmax(x):
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    return xf - torch.logsumexp(xf, dim=-1, keepdim=True)
