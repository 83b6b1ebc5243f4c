"""moe_combine in one pass: each program reads its token's K rows straight from expert_out.

The baseline gathers the K rows of every token into a (T * K, H) scratch tensor and then reads the
scratch back to form the weighted sum: the K * H row elements of each token cross memory three
times (read, written, read again) instead of once. Here one launch over (token, column block)
loads the token's row indices and weights, reads each of its K rows once from expert_out at their
permuted positions and writes only the (T, H) result: about a third of the traffic for K >= 2.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(src_ptr, perm_ptr, w_ptr, out_ptr, H, K: tl.constexpr, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < H
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(K):
        row = tl.load(perm_ptr + t * K + k).to(tl.int64)
        w = tl.load(w_ptr + t * K + k)
        x = tl.load(src_ptr + row * H + cols, mask=mask, other=0.0).to(tl.float32)
        acc += w * x
    tl.store(out_ptr + t * H + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def moe_combine(expert_out, inv_perm, weights):
    M, H = expert_out.shape
    T, K = inv_perm.shape
    out = torch.empty((T, H), dtype=expert_out.dtype, device=expert_out.device)
    block = 1024 if expert_out.element_size() == 2 else 512
    _combine_kernel[(T, triton.cdiv(H, block))](expert_out, inv_perm, weights, out, H, K=K, BLOCK=block,
                                                 num_warps=4)
    return out
