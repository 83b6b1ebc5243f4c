"""Reference for mini_prims' route_tokens: a stable sort of the flat routing entries by expert,
the run boundaries, the weights in sorted order, and each expert's total gate weight summed in
float64 and rounded once to float32."""

import torch


def route_tokens(topk_ids, topk_weights, E):
    keys = topk_ids.reshape(-1).long()
    weights = topk_weights.reshape(-1)
    order = torch.argsort(keys, stable=True)
    counts = torch.bincount(keys, minlength=E)
    offsets = torch.zeros(E + 1, dtype=torch.long, device=keys.device)
    offsets[1:] = torch.cumsum(counts, 0)
    sums = torch.zeros(E, dtype=torch.float64, device=keys.device).index_add_(0, keys, weights.double())
    out_dtype = torch.promote_types(weights.dtype, torch.float32)
    return order.to(torch.int32), offsets.to(torch.int32), weights[order].to(out_dtype), sums.to(out_dtype)
