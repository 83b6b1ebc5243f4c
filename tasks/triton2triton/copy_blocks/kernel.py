"""copy_blocks: copy whole blocks of a paged KV cache (both caches) from source to destination ids."""

import triton
import triton.language as tl


@triton.jit
def _copy_kernel(key_cache_ptr, value_cache_ptr, mapping_ptr, BLOCK, TILE: tl.constexpr):
    p = tl.program_id(0)
    offs = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = offs < BLOCK
    src = tl.load(mapping_ptr + 2 * p) * BLOCK + offs
    dst = tl.load(mapping_ptr + 2 * p + 1) * BLOCK + offs
    tl.store(key_cache_ptr + dst, tl.load(key_cache_ptr + src, mask=mask), mask=mask)
    tl.store(value_cache_ptr + dst, tl.load(value_cache_ptr + src, mask=mask), mask=mask)


def copy_blocks(key_cache, value_cache, block_mapping):
    """For every (src, dst) row of block_mapping, copy row src of key_cache and of value_cache
    (NB, BLOCK) onto row dst, in place. Returns None."""
    P = block_mapping.shape[0]
    BLOCK = key_cache.shape[1]
    if P == 0 or BLOCK == 0:
        return None
    tile = 128
    _copy_kernel[(P, triton.cdiv(BLOCK, tile))](key_cache, value_cache, block_mapping, BLOCK, TILE=tile)
    return None
