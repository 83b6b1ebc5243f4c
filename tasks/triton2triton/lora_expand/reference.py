"""Reference for lora_expand: each adapter's tokens times that adapter's B matrix, added to the base
output in float32 (float64 for float64 inputs) and rounded once; tokens without an adapter keep base."""

import torch


def lora_expand(base, delta, lora_b, idx):
    acc = torch.promote_types(base.dtype, torch.float32)
    out = base.to(acc).clone()
    ids = idx.long()
    for a in range(lora_b.shape[0]):
        rows = ids == a
        out[rows] += delta[rows].to(acc) @ lora_b[a].to(acc).t()
    return out.to(base.dtype)
