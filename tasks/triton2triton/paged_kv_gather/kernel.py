"""paged_kv_gather: copy each sequence's KV-cache pages into contiguous (B, tokens, HKV, D) tensors."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(k_ptr, v_ptr, bt_ptr, ko_ptr, vo_ptr, MAXB, BS: tl.constexpr, HKV: tl.constexpr,
                   D: tl.constexpr):
    b = tl.program_id(0)
    t = tl.program_id(1)
    page = tl.load(bt_ptr + b * MAXB + t // BS).to(tl.int64)
    src = (page * BS + t % BS) * HKV * D
    dst = (b.to(tl.int64) * MAXB * BS + t) * HKV * D
    offs = tl.arange(0, D)
    for h in range(HKV):
        tl.store(ko_ptr + dst + h * D + offs, tl.load(k_ptr + src + h * D + offs))
        tl.store(vo_ptr + dst + h * D + offs, tl.load(v_ptr + src + h * D + offs))


def paged_kv_gather(k_cache, v_cache, block_tables):
    """(k, v), each (B, MAXB * BS, HKV, D): the pages of block_tables[b] in order, for every sequence b."""
    B, MAXB = block_tables.shape
    _, BS, HKV, D = k_cache.shape
    k = torch.empty((B, MAXB * BS, HKV, D), dtype=k_cache.dtype, device=k_cache.device)
    v = torch.empty_like(k)
    _gather_kernel[(B, MAXB * BS)](k_cache, v_cache, block_tables, k, v, MAXB, BS=BS, HKV=HKV, D=D, num_warps=2)
    return k, v
