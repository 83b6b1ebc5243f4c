"""Reference for paged_decode_attention, in float32 (float64 for float64 inputs), rounded once."""

import math

import torch


def paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens):
    acc = torch.promote_types(q.dtype, torch.float32)
    B, HQ, D = q.shape
    BS, HKV = k_cache.shape[1], k_cache.shape[2]
    group = HQ // HKV
    out = torch.empty_like(q)
    for b in range(B):
        n = int(seq_lens[b])
        pages = block_tables[b, : (n + BS - 1) // BS].long()
        k = k_cache[pages].reshape(-1, HKV, D)[:n].to(acc)  # (n, HKV, D)
        v = v_cache[pages].reshape(-1, HKV, D)[:n].to(acc)
        k = k.repeat_interleave(group, dim=1)  # (n, HQ, D)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b].to(acc), k) / math.sqrt(D)
        out[b] = torch.einsum("hn,nhd->hd", torch.softmax(scores, dim=-1), v).to(q.dtype)
    return out
