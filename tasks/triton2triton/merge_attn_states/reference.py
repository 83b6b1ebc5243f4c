"""Reference for merge_attn_states: the two partial results weighted by their softmax mass, in float32
(float64 for float64 inputs), the output rounded once."""

import torch


def merge_attn_states(prefix_out, prefix_lse, suffix_out, suffix_lse):
    acc = torch.promote_types(prefix_out.dtype, torch.float32)
    a = prefix_lse.to(acc)
    b = suffix_lse.to(acc)
    m = torch.maximum(a, b)
    wa = torch.exp(a - m)
    wb = torch.exp(b - m)
    total = wa + wb
    out = (prefix_out.to(acc) * (wa / total)[..., None] + suffix_out.to(acc) * (wb / total)[..., None])
    return out.to(prefix_out.dtype), (m + torch.log(total)).to(torch.promote_types(acc, torch.float32))
