"""reshape_and_cache: store the keys and values of new tokens into a paged KV cache (flash layout)."""

import triton
import triton.language as tl


@triton.jit
def _store_head_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, H, D, BS,
                       BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    slot = tl.load(slot_ptr + t)
    if slot >= 0:
        block = slot // BS
        offset = slot % BS
        cols = tl.arange(0, BLOCK_D)
        mask = cols < D
        src = (t.to(tl.int64) * H + h) * D + cols
        dst = ((block * BS + offset) * H + h) * D + cols
        tl.store(key_cache_ptr + dst, tl.load(key_ptr + src, mask=mask), mask=mask)
        tl.store(value_cache_ptr + dst, tl.load(value_ptr + src, mask=mask), mask=mask)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping):
    """Write key[t] and value[t] (H, D) into slot slot_mapping[t] of key_cache and value_cache
    (NB, BS, H, D), in place; tokens with a negative slot are skipped. Returns None."""
    T, H, D = key.shape
    BS = key_cache.shape[1]
    if T == 0:
        return None
    _store_head_kernel[(T, H)](key, value, key_cache, value_cache, slot_mapping, H, D, BS,
                               BLOCK_D=triton.next_power_of_2(D))
    return None
