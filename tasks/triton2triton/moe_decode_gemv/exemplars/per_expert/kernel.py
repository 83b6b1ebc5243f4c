"""moe_decode_gemv with one program per (expert, column block), each weight tile read once.

At decode the layer is bound by reading expert weights. The baseline gives every routed
(token, slot) pair its own programs, so an expert chosen by t pairs of the batch has its weights
streamed t times (a batch of 16 Mixtral tokens routes 32 pairs to 8 experts: each expert's 235 MB
gate/up weight is read about 4 times), and the products run as FMA reductions on the CUDA cores.
Here the program for (column block, expert e) finds the pairs routed to e from topk_ids, compacts
them into 16-row chunks (a prefix count over the pairs), and multiplies each chunk by the weight
tile with tl.dot: each weight byte is read once per batch, experts no pair chose are skipped,
and consecutive programs walk the column blocks of one expert.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _expert_kernel(x_ptr, w_ptr, ids_ptr, y_ptr, N, K, TOPK, P, BLOCK_P: tl.constexpr, ROWS: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, IEEE: tl.constexpr):
    pid_n = tl.program_id(0)
    e = tl.program_id(1)
    ps = tl.arange(0, BLOCK_P)
    ids = tl.load(ids_ptr + ps, mask=ps < P, other=-1)
    sel = ids == e
    count = tl.sum(sel.to(tl.int32), axis=0)
    # slot[p]: the position of pair p among the pairs routed to e.
    slot = tl.cumsum(sel.to(tl.int32), axis=0) - 1
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < N
    rn_c = tl.minimum(rn, N - 1).to(tl.int64)
    rk = tl.arange(0, BLOCK_K)
    rows = tl.arange(0, ROWS)
    w_base = w_ptr + e.to(tl.int64) * N * K
    for r0 in range(0, count, ROWS):
        # pair_of[r]: the pair in row r of this chunk (rows past the count are masked).
        hit = sel[None, :] & (slot[None, :] == (r0 + rows)[:, None])
        pair_of = tl.sum(tl.where(hit, ps[None, :], 0), axis=1)
        r_ok = r0 + rows < count
        token = (pair_of // TOPK).to(tl.int64)
        acc = tl.zeros([ROWS, BLOCK_N], dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + rk
            k_ok = kk < K
            xt = tl.load(x_ptr + token[:, None] * K + kk[None, :], mask=r_ok[:, None] & k_ok[None, :], other=0.0)
            wt = tl.load(w_base + rn_c[None, :] * K + kk[:, None], mask=k_ok[:, None], other=0.0)
            if IEEE:
                acc = tl.dot(xt, wt, acc, input_precision="ieee")
            else:
                acc = tl.dot(xt, wt, acc)
        tl.store(y_ptr + pair_of.to(tl.int64)[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
                 mask=r_ok[:, None] & n_ok[None, :])


def moe_decode_gemv(x, w, topk_ids):
    M, K = x.shape
    E, N, _ = w.shape
    TOPK = topk_ids.shape[1]
    P = M * TOPK
    y = torch.empty((M, TOPK, N), dtype=x.dtype, device=x.device)
    bn, bk = 64, 128
    _expert_kernel[(triton.cdiv(N, bn), E)](x, w, topk_ids, y, N, K, TOPK, P, BLOCK_P=triton.next_power_of_2(P),
                                            ROWS=16, BLOCK_N=bn, BLOCK_K=bk, IEEE=x.dtype == torch.float32,
                                            num_warps=4, num_stages=4)
    return y
