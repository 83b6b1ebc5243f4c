"""The operation to implement: the training-mode forward of batch normalisation on (N, C, H, W)
feature maps (as torch.nn.functional.batch_norm(..., training=True) computes it): per-channel
mean and biased variance over N, H and W, the normalised and affine-transformed output, and the
mean and inverse standard deviation saved for the backward pass. In (at least) float32; y is
rounded once to x's dtype."""

import torch


def batch_norm_train(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    compute = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(compute)
    mean = xf.mean(dim=(0, 2, 3))
    var = xf.var(dim=(0, 2, 3), unbiased=False)
    invstd = torch.rsqrt(var + eps)
    scale = (invstd * weight.to(compute))[None, :, None, None]
    y = (xf - mean[None, :, None, None]) * scale + bias.to(compute)[None, :, None, None]
    return y.to(x.dtype), mean, invstd
