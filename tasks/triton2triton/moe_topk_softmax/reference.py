"""Reference for moe_topk_softmax: the K largest router logits per token (ties to the lower expert
id), and the softmax over those K logits in float32 (float64 for float64 inputs)."""

import torch


def moe_topk_softmax(gating, K):
    acc = torch.promote_types(gating.dtype, torch.float32)
    values, ids = torch.sort(gating.to(acc), dim=-1, descending=True, stable=True)
    top = values[:, :K]
    weights = torch.softmax(top, dim=-1)
    return weights.to(torch.promote_types(acc, torch.float32)), ids[:, :K].to(torch.int32)
