"""Reference for depthwise_conv2d_nhwc: a grouped conv2d (groups = C) of the channels-first view, in
float32 (float64 for float64 inputs), rounded once."""

import torch


def depthwise_conv2d_nhwc(x, weight, bias):
    acc = torch.promote_types(x.dtype, torch.float32)
    K, _, C = weight.shape
    xc = x.to(acc).permute(0, 3, 1, 2)
    wc = weight.to(acc).permute(2, 0, 1).unsqueeze(1)  # (C, 1, K, K)
    out = torch.nn.functional.conv2d(xc, wc, bias.to(acc), padding=(K - 1) // 2, groups=C)
    return out.permute(0, 2, 3, 1).contiguous().to(x.dtype)
