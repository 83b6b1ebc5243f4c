"""The operation to implement: 2x bilinear upsampling of (N, C, H, W) feature maps
(align_corners=False, as torch.nn.Upsample(scale_factor=2, mode="bilinear") does), in (at least)
float32, rounded once to x's dtype. The (N, C, 2H, 2W) result is returned viewed as
(N, C, H, 2, W, 2): the same memory, y[n, c, h, a, w, b] = out[n, c, 2h + a, 2w + b]."""

import torch


def upsample_bilinear2x(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    n, c, h, w = x.shape
    out = torch.nn.functional.interpolate(x.to(compute), scale_factor=2, mode="bilinear", align_corners=False)
    return out.to(x.dtype).reshape(n, c, h, 2, w, 2)
