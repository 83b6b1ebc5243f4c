"""Reference for fp8_block_gemm: decode the float8_e4m3fn bytes, apply the 1 x 128 activation scales
and the 128 x 128 weight scales element by element, multiply in float32 (float64 when the scales are
float64), round once to bfloat16."""

import torch


def fp8_block_gemm(xq, x_scale, wq, w_scale):
    acc = torch.promote_types(x_scale.dtype, torch.float32)
    M, K = xq.shape
    N = wq.shape[0]
    x = xq.view(torch.float8_e4m3fn).to(acc)
    w = wq.view(torch.float8_e4m3fn).to(acc)
    xs = x_scale.to(acc).repeat_interleave(128, dim=1)[:, :K]
    ws = w_scale.to(acc).repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
    y = (x * xs) @ (w * ws).t()
    return y.to(torch.bfloat16)
