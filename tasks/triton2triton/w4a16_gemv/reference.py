"""Reference for w4a16_gemv: unpack the int4 weight, dequantize and multiply in float32 (float64
for float64 inputs), rounded once."""

import torch

GROUP = 128


def w4a16_gemv(x, qweight, scales):
    acc = torch.promote_types(x.dtype, torch.float32)
    N = qweight.shape[0]
    shifts = 4 * torch.arange(8, device=qweight.device)
    q = (qweight.long()[:, :, None] >> shifts) & 15  # (N, K / 8, 8): element k = 8 * c + j
    w = (q.reshape(N, -1) - 8).to(acc) * scales.to(acc).repeat_interleave(GROUP, dim=1)
    return torch.matmul(x.to(acc), w.t()).to(x.dtype)
