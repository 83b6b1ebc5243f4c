"""Reference for qkv_split_transpose: a pure layout change (values copied exactly)."""


def qkv_split_transpose(qkv, HQ, HKV):
    T = qkv.shape[0]
    D = qkv.shape[1] // (HQ + 2 * HKV)
    heads = qkv.reshape(T, HQ + 2 * HKV, D).transpose(0, 1)
    return (heads[:HQ].contiguous(), heads[HQ:HQ + HKV].contiguous(), heads[HQ + HKV:].contiguous())
