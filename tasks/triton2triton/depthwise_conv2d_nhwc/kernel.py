"""depthwise_conv2d_nhwc: KxK depthwise convolution (stride 1, same padding) of an (N, H, W, C) batch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _dwconv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, total, H, W, C, K: tl.constexpr, BLOCK: tl.constexpr):
    # One lane per output element, in output order.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = offs % C
    pix = offs // C
    w = pix % W
    h = (pix // W) % H
    n = pix // (W * H)
    acc = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    for i in tl.static_range(K):
        for j in tl.static_range(K):
            hi = h + i - (K - 1) // 2
            wj = w + j - (K - 1) // 2
            ok = mask & (hi >= 0) & (hi < H) & (wj >= 0) & (wj < W)
            src = ((n * H + hi) * W + wj).to(tl.int64) * C + c
            xv = tl.load(x_ptr + src, mask=ok, other=0.0).to(tl.float32)
            wv = tl.load(w_ptr + (i * K + j) * C + c, mask=mask, other=0.0).to(tl.float32)
            acc += xv * wv
    tl.store(out_ptr + offs.to(tl.int64), acc.to(out_ptr.dtype.element_ty), mask=mask)


def depthwise_conv2d_nhwc(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """bias[c] + the KxK depthwise cross-correlation of x (N, H, W, C) with weight (K, K, C), zero
    padding (K - 1) / 2; a new (N, H, W, C) tensor of x's dtype."""
    N, H, W, C = x.shape
    K = weight.shape[0]
    out = torch.empty_like(x)
    total = x.numel()
    block = 1024
    _dwconv_kernel[(triton.cdiv(total, block),)](x, weight, bias, out, total, H, W, C, K=K, BLOCK=block)
    return out
