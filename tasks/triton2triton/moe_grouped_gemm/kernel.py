"""moe_grouped_gemm: the grouped GEMM of a mixture-of-experts layer, rows grouped by expert."""

import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_gemm_kernel(x_ptr, w_ptr, counts_ptr, y_ptr, T, N, K, E, IEEE: tl.constexpr, BLOCK_E: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per (BLOCK_M rows of y, BLOCK_N columns): it adds the product of every expert whose
    # rows fall in its row range, each with that expert's rows only.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    ids = tl.arange(0, BLOCK_E)
    counts = tl.load(counts_ptr + ids, mask=ids < E, other=0)
    ends = tl.cumsum(counts, axis=0)
    starts = ends - counts
    r0 = pid_m * BLOCK_M
    e_first = tl.sum((ends <= r0).to(tl.int32), axis=0)
    e_last = tl.sum(((starts < r0 + BLOCK_M) & (ids < E)).to(tl.int32), axis=0)
    rm = r0 + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for e in range(e_first, e_last):
        lo = tl.sum(tl.where(ids == e, starts, 0), axis=0)
        hi = tl.sum(tl.where(ids == e, ends, 0), axis=0)
        if hi > lo:
            rows = (rm >= lo) & (rm < hi)
            w_base = w_ptr + tl.cast(e * N, tl.int64) * K
            for k0 in range(0, K, BLOCK_K):
                kk = k0 + rk
                a = tl.load(x_ptr + rm.to(tl.int64)[:, None] * K + kk[None, :],
                            mask=rows[:, None] & (kk[None, :] < K), other=0.0)
                b = tl.load(w_base + rn.to(tl.int64)[None, :] * K + kk[:, None],
                            mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
                if IEEE:
                    acc = tl.dot(a, b, acc, input_precision="ieee")
                else:
                    acc = tl.dot(a, b, acc)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < T) & (rn[None, :] < N))


def moe_grouped_gemm(x, w, counts):
    """y (T, N): rows of x grouped by expert (counts[e] consecutive rows each) times w[e].T; zeros after."""
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    bm, bn, bk = 64, 64, 32
    grid = (triton.cdiv(T, bm), triton.cdiv(N, bn))
    _grouped_gemm_kernel[grid](x, w, counts, y, T, N, K, E, IEEE=x.dtype == torch.float32,
                               BLOCK_E=triton.next_power_of_2(E), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return y
