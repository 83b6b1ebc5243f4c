"""Reference for mini_decode's decode_step: float32 math (float64 for float64 inputs), with the
intermediates rounded to the input dtype at the same points as mini_decode/engine.py."""

import math

import torch


def decode_step(x, norm_weight, w_qkv, cos_sin, positions, k_cache, v_cache, w_o, eps):
    dtype = x.dtype
    acc = torch.promote_types(dtype, torch.float32)
    B, HKV, _, D = k_cache.shape
    HQ = w_qkv.shape[1] // D - 2 * HKV
    xf = x.to(acc)
    h = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * norm_weight.to(acc)).to(dtype)
    qkv = torch.matmul(h.to(acc), w_qkv.to(acc)).to(dtype).to(acc).reshape(B, HQ + 2 * HKV, D)
    table = cos_sin.to(acc)[positions.long()]
    cos, sin = table[:, None, : D // 2], table[:, None, D // 2 :]
    qk = qkv[:, : HQ + HKV]
    x1, x2 = qk[..., : D // 2], qk[..., D // 2 :]
    qk = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(dtype).to(acc)
    q, k_new, v_new = qk[:, :HQ], qk[:, HQ:], qkv[:, HQ + HKV :]
    group = HQ // HKV
    out = torch.empty(B, HQ, D, dtype=acc, device=x.device)
    for b in range(B):
        n = int(positions[b])
        keys = torch.cat([k_cache[b, :, :n].to(acc), k_new[b, :, None]], dim=1).repeat_interleave(group, dim=0)
        vals = torch.cat([v_cache[b, :, :n].to(acc), v_new[b, :, None]], dim=1).repeat_interleave(group, dim=0)
        scores = torch.einsum("hd,hnd->hn", q[b], keys) / math.sqrt(D)
        out[b] = torch.einsum("hn,hnd->hd", torch.softmax(scores, dim=-1), vals)
    o = out.to(dtype).to(acc).reshape(B, HQ * D)
    return (torch.matmul(o, w_o.to(acc)) + xf).to(dtype)
