"""avg_pool2d_nhwc: KxK average pooling (stride S, zero padding P, divisor K * K) of an (N, H, W, C) batch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool_kernel(x_ptr, out_ptr, total, H, W, C, HO, WO, S, P, K: tl.constexpr, BLOCK: tl.constexpr):
    # One lane per output element, in output order.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = offs % C
    pix = offs // C
    q = pix % WO
    p = (pix // WO) % HO
    n = pix // (WO * HO)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(K):
        for j in tl.static_range(K):
            hi = p * S + i - P
            wj = q * S + j - P
            ok = mask & (hi >= 0) & (hi < H) & (wj >= 0) & (wj < W)
            src = ((n * H + hi) * W + wj).to(tl.int64) * C + c
            acc += tl.load(x_ptr + src, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs.to(tl.int64), (acc / (K * K)).to(out_ptr.dtype.element_ty), mask=mask)


def avg_pool2d_nhwc(x: torch.Tensor, K: int, S: int, P: int) -> torch.Tensor:
    """The KxK average (divisor K * K, zero padding P, stride S) of x (N, H, W, C); a new
    (N, HO, WO, C) tensor of x's dtype."""
    N, H, W, C = x.shape
    HO = (H + 2 * P - K) // S + 1
    WO = (W + 2 * P - K) // S + 1
    out = torch.empty((N, HO, WO, C), dtype=x.dtype, device=x.device)
    total = out.numel()
    block = 1024
    _avg_pool_kernel[(triton.cdiv(total, block),)](x, out, total, H, W, C, HO, WO, S, P, K=K, BLOCK=block)
    return out
