"""Reference for int8_quant_per_group: symmetric int8 quantisation of each 128-wide group of a row,
computed in float32 as the task specifies (so float64 inputs give the same answer)."""

import torch

GROUP = 128


def int8_quant_per_group(x):
    M, N = x.shape
    xf = x.to(torch.float32).reshape(M, N // GROUP, GROUP)
    amax = xf.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    inv = torch.tensor(127.0, dtype=torch.float32, device=x.device) / amax
    q = torch.round(xf * inv).clamp(-127, 127).to(torch.int8)
    return q.reshape(M, N), (amax / 127.0).squeeze(-1)
