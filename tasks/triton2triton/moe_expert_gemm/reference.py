"""Reference for moe_expert_gemm: per-expert x @ w.T in float32 (float64 for float64 inputs), rounded once."""

import torch


def moe_expert_gemm(x, w):
    acc = torch.promote_types(x.dtype, torch.float32)
    return torch.bmm(x.to(acc), w.to(acc).transpose(1, 2)).to(x.dtype)
