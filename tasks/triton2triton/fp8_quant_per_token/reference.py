"""Reference for fp8_quant_per_token: per-row E4M3 quantisation computed in float32 as the task states it
(so float64 inputs give the same answer), encoded by torch's float8_e4m3fn conversion."""

import torch


def fp8_quant_per_token(x):
    xf = x.to(torch.float32)
    amax = xf.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    inv = torch.tensor(448.0, dtype=torch.float32, device=x.device) / amax
    v = (xf * inv).clamp(-448.0, 448.0)
    return v.to(torch.float8_e4m3fn).view(torch.uint8), (amax / 448.0).squeeze(-1)
