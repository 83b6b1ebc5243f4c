"""causal_conv1d: the short depthwise causal convolution of a Mamba block, followed by SiLU."""

import torch
import triton
import triton.language as tl


@triton.jit
def _conv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, D, L, W: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # b * D + d
    d = tl.program_id(0) % D
    x_row = x_ptr + row * L
    bias = tl.load(b_ptr + d).to(tl.float32)
    for start in range(0, L, BLOCK):
        t = start + tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32) + bias
        for w in tl.static_range(W):
            src = t - (W - 1) + w
            xv = tl.load(x_row + src, mask=(src >= 0) & (src < L), other=0.0).to(tl.float32)
            acc += tl.load(w_ptr + d * W + w).to(tl.float32) * xv
        tl.store(out_ptr + row * L + t, (acc * tl.sigmoid(acc)).to(out_ptr.dtype.element_ty), mask=t < L)


def causal_conv1d(x, weight, bias):
    """silu(causal depthwise conv of x (B, D, L) with weight (D, W) + bias (D,)); (B, D, L) like x."""
    B, D, L = x.shape
    W = weight.shape[1]
    out = torch.empty_like(x)
    _conv_kernel[(B * D,)](x, weight, bias, out, D, L, W=W, BLOCK=256)
    return out
