"""nchw_to_nhwc: copy a channels-first (N, C, H, W) batch into a channels-last (N, H, W, C) one."""

import torch
import triton
import triton.language as tl


@triton.jit
def _nchw_to_nhwc_kernel(x_ptr, y_ptr, total, C, HW, BLOCK: tl.constexpr):
    # One lane per output element, in output order.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = offs % C
    pixel = offs // C
    n = pixel // HW
    hw = pixel % HW
    v = tl.load(x_ptr + (n * C + c) * HW + hw, mask=mask)
    tl.store(y_ptr + offs, v, mask=mask)


def nchw_to_nhwc(x: torch.Tensor) -> torch.Tensor:
    """A new contiguous (N, H, W, C) tensor with y[n, h, w, c] = x[n, c, h, w]."""
    N, C, H, W = x.shape
    y = torch.empty((N, H, W, C), dtype=x.dtype, device=x.device)
    total = x.numel()
    block = 1024
    _nchw_to_nhwc_kernel[(triton.cdiv(total, block),)](x, y, total, C, H * W, BLOCK=block)
    return y
