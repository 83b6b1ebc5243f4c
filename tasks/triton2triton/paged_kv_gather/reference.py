"""Reference for paged_kv_gather: the pages of each sequence's block table, laid end to end."""


def paged_kv_gather(k_cache, v_cache, block_tables):
    B, MAXB = block_tables.shape
    _, BS, HKV, D = k_cache.shape
    pages = block_tables.long()
    k = k_cache[pages].reshape(B, MAXB * BS, HKV, D)
    v = v_cache[pages].reshape(B, MAXB * BS, HKV, D)
    return k, v
