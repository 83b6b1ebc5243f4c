"""moe_grouped_gemm over a per-expert tile schedule, with 128 x 128 tiles.

The baseline tiles the output rows uniformly in 64-row blocks, so a block that straddles the
boundary between two experts runs the whole K loop once per expert it touches (with half-empty
operand tiles), and every block beyond the last group still launches; its 64 x 64 x 32 tiles
also give each loaded operand little reuse. Here each program derives, from the counts, which
expert and which 128-row tile of that expert it owns (tiles never cross experts), so every K
loop runs once per useful tile; 128 x 128 x 64 tiles with 8 warps and 3 pipeline stages double
the arithmetic per byte loaded; the spare programs of the grid zero the rows after the last
group with plain stores, and consecutive programs walk the M tiles of one weight column block so
the expert's weight tile stays in L2.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_gemm_kernel(x_ptr, w_ptr, counts_ptr, y_ptr, T, N, K, E, IEEE: tl.constexpr, BLOCK_E: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    t = tl.program_id(0)
    pid_n = tl.program_id(1)
    ids = tl.arange(0, BLOCK_E)
    counts = tl.load(counts_ptr + ids, mask=ids < E, other=0)
    row_end = tl.cumsum(counts, axis=0)
    tiles = (counts + BLOCK_M - 1) // BLOCK_M
    tile_end = tl.cumsum(tiles, axis=0)
    total_tiles = tl.sum(tiles, axis=0)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < N
    if t >= total_tiles:
        # Spare programs: zero the rows after the last group.
        total = tl.sum(counts, axis=0)
        rm = total + (t - total_tiles) * BLOCK_M + tl.arange(0, BLOCK_M)
        zero = tl.zeros([BLOCK_M, BLOCK_N], dtype=y_ptr.dtype.element_ty)
        tl.store(y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], zero, mask=(rm[:, None] < T) & n_ok[None, :])
        return
    e = tl.sum((tile_end <= t).to(tl.int32), axis=0)
    sel = ids == e
    first_tile = tl.sum(tl.where(sel, tile_end - tiles, 0), axis=0)
    hi = tl.sum(tl.where(sel, row_end, 0), axis=0)
    lo = hi - tl.sum(tl.where(sel, counts, 0), axis=0)
    rm = lo + (t - first_tile) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = rm < hi
    rm_c = tl.minimum(rm, hi - 1).to(tl.int64)
    rn_c = tl.minimum(rn, N - 1).to(tl.int64)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + rm_c[:, None] * K + rk[None, :]
    b_ptrs = w_ptr + e.to(tl.int64) * N * K + rn_c[None, :] * K + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=m_ok[:, None] & n_ok[None, :])


def moe_grouped_gemm(x, w, counts):
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    bm, bn, bk = 128, 128, 64
    # At most cdiv(T, bm) + E tiles hold rows: sum_e ceil(c_e / bm) <= T / bm + E.
    grid = (triton.cdiv(T, bm) + E, triton.cdiv(N, bn))
    _grouped_gemm_kernel[grid](x, w, counts, y, T, N, K, E, IEEE=x.dtype == torch.float32,
                               BLOCK_E=triton.next_power_of_2(E), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                               num_warps=8, num_stages=3)
    return y
