"""avg_pool2d_nhwc with one program per (output row segment, channel block) tile.

The baseline gives each lane one output element: it spends three integer divisions per element
recovering (n, p, q, c), recomputes the bounds of every tap per element and loads each tap as a
scalar 2- or 4-byte load, so it is bound by instruction issue rather than memory. Here a program
owns BLOCK_Q consecutive outputs of one output row times BLOCK_C channels: (n, p) come from the
grid, a tap's row bounds are one scalar test, and each tap is one [BLOCK_Q, BLOCK_C] tile load
with 16-byte vectors along the channels (contiguous in NHWC). The taps are summed in a fixed order.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool_kernel(
    x_ptr, out_ptr, H, W, C, HO, WO, S, P, K: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_C: tl.constexpr
):
    row = tl.program_id(2)  # n * HO + p
    n = row // HO
    p = row % HO
    q = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = c < C
    acc = tl.zeros([BLOCK_Q, BLOCK_C], dtype=tl.float32)
    for i in tl.static_range(K):
        hi = p * S + i - P
        row_ok = (hi >= 0) & (hi < H)
        in_row = x_ptr + (n * H + hi).to(tl.int64) * W * C
        for j in tl.static_range(K):
            wj = q * S + j - P
            m = row_ok & (wj >= 0) & (wj < W)
            xv = tl.load(in_row + wj[:, None] * C + c[None, :], mask=m[:, None] & cmask[None, :], other=0.0)
            acc += xv.to(tl.float32)
    out_row = out_ptr + row.to(tl.int64) * WO * C
    tl.store(
        out_row + q[:, None] * C + c[None, :],
        (acc / (K * K)).to(out_ptr.dtype.element_ty),
        mask=(q[:, None] < WO) & cmask[None, :],
    )


def avg_pool2d_nhwc(x: torch.Tensor, K: int, S: int, P: int) -> torch.Tensor:
    N, H, W, C = x.shape
    HO = (H + 2 * P - K) // S + 1
    WO = (W + 2 * P - K) // S + 1
    out = torch.empty((N, HO, WO, C), dtype=x.dtype, device=x.device)
    # 64 bytes of channels per pixel (4 lanes of 16-byte vectors), 32 outputs: 8 elements per lane.
    block_c = min(triton.next_power_of_2(C), 64 // x.element_size())
    block_q = min(32, triton.next_power_of_2(WO))
    grid = (triton.cdiv(WO, block_q), triton.cdiv(C, block_c), N * HO)
    _avg_pool_kernel[grid](x, out, H, W, C, HO, WO, S, P, K=K, BLOCK_Q=block_q, BLOCK_C=block_c, num_warps=4)
    return out
