"""avg_pool2d_nhwc with one program per (strip of output rows, run of an output row's elements).

The baseline gives each lane one output element: it spends three integer divisions per element
recovering (n, p, q, c), recomputes the bounds of every tap per element and loads each tap as a
scalar 2- or 4-byte load (K * K of them per output), so on a 3x3 stride-1 window it is bound by
instruction issue rather than memory. With stride 1 an output row (n, p) is one contiguous run of
WO * C elements and the tap (i, j) of its element k = q * C + c sits at k + (j - P) * C of input row
p + i - P, in bounds exactly when 0 <= k + (j - P) * C < W * C: no division, no per-pixel index, and
every tap is a contiguous 16-byte-vector load of a BLOCK run. A program walks ROWS consecutive output
rows of the same run, so the K input rows two neighbouring outputs share are still in L1 when the
second one loads them. The taps are summed in the baseline's order (i, then j), then divided by K * K.
Other strides take a (BLOCK_Q pixels x BLOCK_C channels) tile of one output row.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool_s1_kernel(
    x_ptr, out_ptr, H, W, C, HO, WO, P, K: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr
):
    n = tl.program_id(2)
    p0 = tl.program_id(1) * ROWS
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row_len = W * C
    kmask = k < WO * C
    x_img = x_ptr + n.to(tl.int64) * H * row_len
    out_img = out_ptr + n.to(tl.int64) * HO * WO * C
    for p in range(p0, tl.minimum(p0 + ROWS, HO)):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in tl.static_range(K):
            hi = p + i - P
            row_ok = (hi >= 0) & (hi < H)
            in_row = x_img + hi * row_len
            for j in tl.static_range(K):
                src = k + (j - P) * C
                m = kmask & row_ok & (src >= 0) & (src < row_len)
                acc += tl.load(in_row + src, mask=m, other=0.0).to(tl.float32)
        tl.store(out_img + p * WO * C + k, (acc / (K * K)).to(out_ptr.dtype.element_ty), mask=kmask)


@triton.jit
def _avg_pool_tile_kernel(
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
    if S == 1:
        # 16-byte vectors, 8 (16-bit) or 4 (float32) elements a lane.
        num_warps = 4
        block = min(triton.next_power_of_2(WO * C), num_warps * 32 * (16 // x.element_size()))
        rows = triton.cdiv(HO, triton.cdiv(HO, 8))  # strips of at most 8 rows, as even as HO allows
        grid = (triton.cdiv(WO * C, block), triton.cdiv(HO, rows), N)
        _avg_pool_s1_kernel[grid](x, out, H, W, C, HO, WO, P, K=K, ROWS=rows, BLOCK=block, num_warps=num_warps)
        return out
    block_c = min(triton.next_power_of_2(C), 64 // x.element_size())
    block_q = min(32, triton.next_power_of_2(WO))
    grid = (triton.cdiv(WO, block_q), triton.cdiv(C, block_c), N * HO)
    _avg_pool_tile_kernel[grid](x, out, H, W, C, HO, WO, S, P, K=K, BLOCK_Q=block_q, BLOCK_C=block_c, num_warps=4)
    return out
