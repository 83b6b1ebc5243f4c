"""moe_combine: the routing-weighted sum of each token's K expert-output rows (MoE unpermute)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, perm_ptr, dst_ptr, H, BLOCK: tl.constexpr):
    # dst[r] = src[inv_perm.flat[r]] for one row r of the (T * K, H) gathered rows.
    r = tl.program_id(0).to(tl.int64)
    src_row = tl.load(perm_ptr + r).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    for h0 in range(0, H, BLOCK):
        cols = h0 + offs
        mask = cols < H
        x = tl.load(src_ptr + src_row * H + cols, mask=mask)
        tl.store(dst_ptr + r * H + cols, x, mask=mask)


@triton.jit
def _weighted_sum_kernel(rows_ptr, w_ptr, out_ptr, K, H, BLOCK: tl.constexpr):
    # out[t] = sum_k weights[t, k] * rows[t, k], in float32.
    t = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    for h0 in range(0, H, BLOCK):
        cols = h0 + offs
        mask = cols < H
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for k in range(0, K):
            w = tl.load(w_ptr + t * K + k)
            x = tl.load(rows_ptr + (t * K + k) * H + cols, mask=mask, other=0.0).to(tl.float32)
            acc += w * x
        tl.store(out_ptr + t * H + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def moe_combine(expert_out, inv_perm, weights):
    """(T, H): sum_k weights[t, k] * expert_out[inv_perm[t, k]] for every token t."""
    M, H = expert_out.shape
    T, K = inv_perm.shape
    rows = torch.empty((T * K, H), dtype=expert_out.dtype, device=expert_out.device)
    out = torch.empty((T, H), dtype=expert_out.dtype, device=expert_out.device)
    _gather_kernel[(T * K,)](expert_out, inv_perm, rows, H, BLOCK=1024, num_warps=4)
    _weighted_sum_kernel[(T,)](rows, weights, out, K, H, BLOCK=1024, num_warps=4)
    return out
