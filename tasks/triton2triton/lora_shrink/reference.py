"""Reference for lora_shrink: each adapter's tokens times that adapter's A matrix, in float32 (float64
for float64 inputs), scaled and rounded once; tokens without an adapter are zero."""

import torch


def lora_shrink(x, lora_a, idx, scale):
    acc = torch.promote_types(x.dtype, torch.float32)
    T = x.shape[0]
    L, R, _ = lora_a.shape
    y = torch.zeros((T, R), dtype=acc, device=x.device)
    ids = idx.long()
    for a in range(L):
        rows = ids == a
        y[rows] = (x[rows].to(acc) @ lora_a[a].to(acc).t()) * scale
    return y.to(x.dtype)
