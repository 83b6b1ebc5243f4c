"""copy_blocks with wide tiles: each program copies a 4096-value tile of a block row of both
caches, a grid of (pairs, tiles per row)."""

import triton
import triton.language as tl


@triton.jit
def _copy_kernel(key_cache_ptr, value_cache_ptr, mapping_ptr, BLOCK, TILE: tl.constexpr):
    p = tl.program_id(0)
    offs = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = offs < BLOCK
    src = tl.load(mapping_ptr + 2 * p) * BLOCK + offs
    dst = tl.load(mapping_ptr + 2 * p + 1) * BLOCK + offs
    k = tl.load(key_cache_ptr + src, mask=mask)
    v = tl.load(value_cache_ptr + src, mask=mask)
    tl.store(key_cache_ptr + dst, k, mask=mask)
    tl.store(value_cache_ptr + dst, v, mask=mask)


def copy_blocks(key_cache, value_cache, block_mapping):
    P = block_mapping.shape[0]
    BLOCK = key_cache.shape[1]
    if P == 0 or BLOCK == 0:
        return None
    tile = min(4096, triton.next_power_of_2(BLOCK))
    warps = max(1, min(8, tile // 512))
    _copy_kernel[(P, BLOCK // tile)](key_cache, value_cache, block_mapping, BLOCK, TILE=tile, num_warps=warps)
    return None
