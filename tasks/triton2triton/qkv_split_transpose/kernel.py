"""qkv_split_transpose: split a fused QKV projection into head-major q, k and v."""

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(qkv_ptr, q_ptr, k_ptr, v_ptr, T, HQ, HKV, D: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    src = qkv_ptr + (t * (HQ + 2 * HKV) + h) * D + offs
    vals = tl.load(src, mask=mask)
    if h < HQ:
        tl.store(q_ptr + (h * T + t) * D + offs, vals, mask=mask)
    elif h < HQ + HKV:
        tl.store(k_ptr + ((h - HQ) * T + t) * D + offs, vals, mask=mask)
    else:
        tl.store(v_ptr + ((h - HQ - HKV) * T + t) * D + offs, vals, mask=mask)


def qkv_split_transpose(qkv, HQ, HKV):
    """(q (HQ, T, D), k (HKV, T, D), v (HKV, T, D)) from a (T, (HQ + 2 HKV) D) fused projection."""
    T, W = qkv.shape
    D = W // (HQ + 2 * HKV)
    q = torch.empty((HQ, T, D), dtype=qkv.dtype, device=qkv.device)
    k = torch.empty((HKV, T, D), dtype=qkv.dtype, device=qkv.device)
    v = torch.empty((HKV, T, D), dtype=qkv.dtype, device=qkv.device)
    _split_kernel[(T, HQ + 2 * HKV)](qkv, q, k, v, T, HQ, HKV, D=D, BLOCK_D=triton.next_power_of_2(D),
                                      num_warps=1)
    return q, k, v
