"""qkv_split_transpose with [tokens, D] tiles, taking v from the heads after q only (it
skips the k heads' offset, so v repeats k)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(qkv_ptr, q_ptr, k_ptr, v_ptr, T, HQ, HKV, D: tl.constexpr, BLOCK_D: tl.constexpr,
                  BLOCK_T: tl.constexpr):
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    h = tl.program_id(1)
    rd = tl.arange(0, BLOCK_D)
    mask = (rt[:, None] < T) & (rd[None, :] < D)
    rt64 = rt.to(tl.int64)
    vals = tl.load(qkv_ptr + (rt64[:, None] * (HQ + 2 * HKV) + h) * D + rd[None, :], mask=mask)
    if h < HQ:
        tl.store(q_ptr + (h * T + rt64[:, None]) * D + rd[None, :], vals, mask=mask)
    elif h < HQ + HKV:
        tl.store(k_ptr + ((h - HQ) * T + rt64[:, None]) * D + rd[None, :], vals, mask=mask)
    else:
        vals = tl.load(qkv_ptr + (rt64[:, None] * (HQ + 2 * HKV) + h - HKV) * D + rd[None, :], mask=mask)
        tl.store(v_ptr + ((h - HQ - HKV) * T + rt64[:, None]) * D + rd[None, :], vals, mask=mask)


def qkv_split_transpose(qkv, HQ, HKV):
    T, W = qkv.shape
    D = W // (HQ + 2 * HKV)
    q = torch.empty((HQ, T, D), dtype=qkv.dtype, device=qkv.device)
    k = torch.empty((HKV, T, D), dtype=qkv.dtype, device=qkv.device)
    v = torch.empty((HKV, T, D), dtype=qkv.dtype, device=qkv.device)
    block_t = 64
    _split_kernel[(triton.cdiv(T, block_t), HQ + 2 * HKV)](qkv, q, k, v, T, HQ, HKV, D=D,
                                                            BLOCK_D=triton.next_power_of_2(D), BLOCK_T=block_t,
                                                            num_warps=4)
    return q, k, v
