"""Reference for mini_mlp's mlp_block: float32 math (float64 for float64 inputs), with the
intermediates rounded to the input dtype at the same points as mini_mlp/mlp.py."""

import torch


def mlp_block(x, norm_weight, w_gate, w_up, w_down, eps):
    dtype = x.dtype
    acc = torch.promote_types(dtype, torch.float32)
    xf = x.to(acc)
    h = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * norm_weight.to(acc)).to(dtype)
    gate = torch.matmul(h.to(acc), w_gate.to(acc)).to(dtype).to(acc)
    up = torch.matmul(h.to(acc), w_up.to(acc)).to(dtype).to(acc)
    act = (gate * torch.sigmoid(gate) * up).to(dtype)
    return torch.matmul(act.to(acc), w_down.to(acc)).to(dtype)
