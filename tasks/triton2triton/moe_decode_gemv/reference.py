"""Reference for moe_decode_gemv: each token's vector times the weight of each of its routed experts,
in float32 (float64 for float64 inputs), rounded once."""

import torch


def moe_decode_gemv(x, w, topk_ids):
    acc = torch.promote_types(x.dtype, torch.float32)
    wt = w.to(acc)[topk_ids.long()]                      # (M, TOPK, N, K)
    y = (wt * x.to(acc)[:, None, None, :]).sum(dim=-1)   # (M, TOPK, N)
    return y.to(x.dtype)
