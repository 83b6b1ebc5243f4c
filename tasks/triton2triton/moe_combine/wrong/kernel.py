"""moe_combine in one pass, whose running sum is kept in the case dtype (rounded after every
weighted row is added) instead of float32."""

import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(src_ptr, perm_ptr, w_ptr, out_ptr, H, K: tl.constexpr, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < H
    acc = tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty)
    for k in tl.static_range(K):
        row = tl.load(perm_ptr + t * K + k).to(tl.int64)
        w = tl.load(w_ptr + t * K + k)
        x = tl.load(src_ptr + row * H + cols, mask=mask, other=0.0).to(tl.float32)
        acc = (acc.to(tl.float32) + w * x).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + t * H + cols, acc, mask=mask)


def moe_combine(expert_out, inv_perm, weights):
    M, H = expert_out.shape
    T, K = inv_perm.shape
    out = torch.empty((T, H), dtype=expert_out.dtype, device=expert_out.device)
    block = 1024 if expert_out.element_size() == 2 else 512
    _combine_kernel[(T, triton.cdiv(H, block))](expert_out, inv_perm, weights, out, H, K=K, BLOCK=block,
                                                 num_warps=4)
    return out
