"""Reference for selective_state_update (one Mamba decode step), in float32 (float64 for float64 inputs)."""

import torch


def selective_state_update(state, x, dt, A, Bm, C, Dskip, z, dt_bias):
    acc = torch.promote_types(x.dtype, torch.float32)
    acc = torch.promote_types(acc, state.dtype)
    s = state.to(acc)
    xf, zf = x.to(acc), z.to(acc)
    delta = torch.nn.functional.softplus(dt.to(acc) + dt_bias.to(acc))  # (B, D)
    dA = torch.exp(A.to(acc)[None] * delta[:, :, None])  # (B, D, N)
    dBx = Bm.to(acc)[:, None, :] * (delta * xf)[:, :, None]
    new_state = s * dA + dBx
    y = (new_state * C.to(acc)[:, None, :]).sum(dim=-1) + Dskip.to(acc) * xf
    out = y * zf * torch.sigmoid(zf)
    return out.to(x.dtype), new_state.to(state.dtype)
