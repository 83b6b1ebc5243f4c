"""Reference for avg_pool2d_nhwc: torch's avg_pool2d (count_include_pad=True) of the channels-first
view, in float32 (float64 for float64 inputs), rounded once."""

import torch


def avg_pool2d_nhwc(x, K, S, P):
    acc = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(acc).permute(0, 3, 1, 2)
    out = torch.nn.functional.avg_pool2d(xc, K, stride=S, padding=P, count_include_pad=True)
    return out.permute(0, 2, 3, 1).contiguous().to(x.dtype)
