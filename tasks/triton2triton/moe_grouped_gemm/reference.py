"""Reference for moe_grouped_gemm: each expert's contiguous block of rows times that expert's weight,
in float32 (float64 for float64 inputs), rounded once; rows past the last group are zero."""

import torch


def moe_grouped_gemm(x, w, counts):
    acc = torch.promote_types(x.dtype, torch.float32)
    T = x.shape[0]
    E, N, _ = w.shape
    y = torch.zeros((T, N), dtype=acc, device=x.device)
    start = 0
    for e, c in enumerate(counts.tolist()):
        if c > 0:
            y[start:start + c] = x[start:start + c].to(acc) @ w[e].to(acc).t()
        start += c
    return y.to(x.dtype)
