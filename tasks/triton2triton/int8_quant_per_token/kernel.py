"""int8_quant_per_token: dynamic symmetric int8 quantisation of each row (token) of a matrix."""

import torch
import triton
import triton.language as tl


@triton.jit
def _round_half_even(v):
    # Compares v with r + 0.5 rather than forming v - r, which the compiler could contract with
    # the product that made v into one fused multiply-add (rounded differently).
    r = tl.floor(v)
    half = r + 0.5
    odd = r - 2.0 * tl.floor(r * 0.5)
    return tl.where(v > half, r + 1.0, tl.where(v == half, r + odd, r))


@triton.jit
def _absmax_kernel(x_ptr, scale_ptr, inv_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        m = tl.maximum(m, tl.abs(x))
    amax = tl.maximum(tl.max(m, axis=0), 1e-10)
    tl.store(scale_ptr + row, amax / 127.0)
    tl.store(inv_ptr + row, tl.div_rn(127.0, amax))


@triton.jit
def _quant_kernel(x_ptr, inv_ptr, q_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.load(inv_ptr + row)
    q = tl.minimum(tl.maximum(_round_half_even(x * inv), -127.0), 127.0)
    tl.store(q_ptr + row * N + cols, q.to(tl.int8), mask=mask)


def int8_quant_per_token(x):
    """(q (M, N) int8, scale (M,) float32) for a contiguous (M, N) x."""
    M, N = x.shape
    q = torch.empty((M, N), dtype=torch.int8, device=x.device)
    scale = torch.empty(M, dtype=torch.float32, device=x.device)
    inv = torch.empty(M, dtype=torch.float32, device=x.device)
    block = 1024
    _absmax_kernel[(M,)](x, scale, inv, N, BLOCK=block)
    _quant_kernel[(M, triton.cdiv(N, block))](x, inv, q, N, BLOCK=block)
    return q, scale
