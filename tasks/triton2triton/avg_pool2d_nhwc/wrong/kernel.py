"""avg_pool2d_nhwc with row-segment tiles that divides each window's sum by the number of its taps
inside the image (count_include_pad=False) instead of K * K: wrong at the borders when P > 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool_kernel(
    x_ptr, out_ptr, H, W, C, HO, WO, S, P, K: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_C: tl.constexpr
):
    row = tl.program_id(2)
    n = row // HO
    p = row % HO
    q = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = c < C
    acc = tl.zeros([BLOCK_Q, BLOCK_C], dtype=tl.float32)
    count = tl.zeros([BLOCK_Q], dtype=tl.float32)
    for i in tl.static_range(K):
        hi = p * S + i - P
        row_ok = (hi >= 0) & (hi < H)
        in_row = x_ptr + (n * H + hi).to(tl.int64) * W * C
        for j in tl.static_range(K):
            wj = q * S + j - P
            m = row_ok & (wj >= 0) & (wj < W)
            xv = tl.load(in_row + wj[:, None] * C + c[None, :], mask=m[:, None] & cmask[None, :], other=0.0)
            acc += xv.to(tl.float32)
            count += m.to(tl.float32)
    out_row = out_ptr + row.to(tl.int64) * WO * C
    tl.store(
        out_row + q[:, None] * C + c[None, :],
        (acc / tl.maximum(count, 1.0)[:, None]).to(out_ptr.dtype.element_ty),
        mask=(q[:, None] < WO) & cmask[None, :],
    )


def avg_pool2d_nhwc(x: torch.Tensor, K: int, S: int, P: int) -> torch.Tensor:
    N, H, W, C = x.shape
    HO = (H + 2 * P - K) // S + 1
    WO = (W + 2 * P - K) // S + 1
    out = torch.empty((N, HO, WO, C), dtype=x.dtype, device=x.device)
    block_c = min(triton.next_power_of_2(C), 64 // x.element_size())
    block_q = min(32, triton.next_power_of_2(WO))
    grid = (triton.cdiv(WO, block_q), triton.cdiv(C, block_c), N * HO)
    _avg_pool_kernel[grid](x, out, H, W, C, HO, WO, S, P, K=K, BLOCK_Q=block_q, BLOCK_C=block_c, num_warps=4)
    return out
