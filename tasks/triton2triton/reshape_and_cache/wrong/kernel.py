"""reshape_and_cache with one program per token, moving the token's whole (H, D) row of K and V
as one contiguous copy into its cache slot (slots at or below zero are padding)."""

import triton
import triton.language as tl


@triton.jit
def _store_token_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, ROW,
                        BLOCK: tl.constexpr):
    t = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    slot = tl.load(slot_ptr + t)
    if slot > 0:
        mask = offs < ROW
        src = t.to(tl.int64) * ROW + offs
        dst = slot * ROW + offs
        k = tl.load(key_ptr + src, mask=mask)
        v = tl.load(value_ptr + src, mask=mask)
        tl.store(key_cache_ptr + dst, k, mask=mask)
        tl.store(value_cache_ptr + dst, v, mask=mask)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping):
    T, H, D = key.shape
    if T == 0:
        return None
    row = H * D  # a slot of the cache: (BS, H, D) blocks hold rows of H * D values back to back
    block = min(2048, triton.next_power_of_2(row))
    warps = max(1, min(8, block // 256))
    _store_token_kernel[(T, triton.cdiv(row, block))](key, value, key_cache, value_cache, slot_mapping, row,
                                                      BLOCK=block, num_warps=warps)
    return None
