"""Reference for batch_norm_train: per-channel statistics over (N, H, W) by two passes, and the normalised
output, in float32 (float64 for float64 inputs)."""

import torch


def batch_norm_train(x, weight, bias, *, eps):
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    mean = xf.mean(dim=(0, 2, 3))
    centred = xf - mean[None, :, None, None]
    var = (centred * centred).mean(dim=(0, 2, 3))
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centred * (rstd * weight.to(acc))[None, :, None, None] + bias.to(acc)[None, :, None, None]
    out = torch.promote_types(acc, torch.float32)
    return y.to(x.dtype), mean.to(out), rstd.to(out)
