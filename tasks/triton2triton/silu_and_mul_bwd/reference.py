"""Reference for silu_and_mul_bwd: gradients of out = silu(gate) * up, in float32 (float64 for
float64 inputs), rounded once."""

import torch


def silu_and_mul_bwd(gate, up, dout):
    acc = torch.promote_types(gate.dtype, torch.float32)
    g, u, d = gate.to(acc), up.to(acc), dout.to(acc)
    s = torch.sigmoid(g)
    dgate = d * u * s * (1.0 + g * (1.0 - s))
    dup = d * g * s
    return dgate.to(gate.dtype), dup.to(gate.dtype)
