"""nchw_to_nhwc as a tiled transpose that numbers each image's output pixels column by column
(w * H + h) while y is row by row (h * W + w): it writes an (N, W, H, C) layout into y."""

import torch
import triton
import triton.language as tl


@triton.jit
def _tile_kernel(x_ptr, y_ptr, C, H, W, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    HW = H * W
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    n = tl.program_id(2).to(tl.int64)
    base = n * C * HW
    mask = (c[:, None] < C) & (p[None, :] < HW)
    tile = tl.load(x_ptr + base + c[:, None] * HW + p[None, :], mask=mask)
    q = (p % W) * H + p // W
    tl.store(y_ptr + base + q[None, :] * C + c[:, None], tile, mask=mask)


def nchw_to_nhwc(x: torch.Tensor) -> torch.Tensor:
    N, C, H, W = x.shape
    y = torch.empty((N, H, W, C), dtype=x.dtype, device=x.device)
    block_c = min(64, max(16, triton.next_power_of_2(C)))
    block_p = 64
    grid = (triton.cdiv(H * W, block_p), triton.cdiv(C, block_c), N)
    _tile_kernel[grid](x, y, C, H, W, BLOCK_C=block_c, BLOCK_P=block_p, num_warps=4)
    return y
