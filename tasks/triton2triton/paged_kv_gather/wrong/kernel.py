"""paged_kv_gather as whole-page copies that take each sequence's pages from the first row of
the block table (the sequence index is left out of the table lookup)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _page_kernel(k_ptr, v_ptr, bt_ptr, ko_ptr, vo_ptr, MAXB, PAGE: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    p = tl.program_id(1)
    offs = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < PAGE
    page = tl.load(bt_ptr + p).to(tl.int64)
    src = page * PAGE + offs
    dst = (b.to(tl.int64) * MAXB + p) * PAGE + offs
    tl.store(ko_ptr + dst, tl.load(k_ptr + src, mask=mask), mask=mask)
    tl.store(vo_ptr + dst, tl.load(v_ptr + src, mask=mask), mask=mask)


def paged_kv_gather(k_cache, v_cache, block_tables):
    B, MAXB = block_tables.shape
    _, BS, HKV, D = k_cache.shape
    k = torch.empty((B, MAXB * BS, HKV, D), dtype=k_cache.dtype, device=k_cache.device)
    v = torch.empty_like(k)
    page = BS * HKV * D
    block = min(4096, triton.next_power_of_2(page))
    _page_kernel[(B, MAXB, triton.cdiv(page, block))](k_cache, v_cache, block_tables, k, v, MAXB, PAGE=page,
                                                      BLOCK=block, num_warps=8)
    return k, v
