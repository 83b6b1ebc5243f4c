"""int8_quant_per_token with each row read once, rounding by the float-to-int conversion
(toward zero) instead of to nearest."""

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
def _quant_row_kernel(x_ptr, q_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10)
    inv = tl.div_rn(127.0, amax)
    q = tl.minimum(tl.maximum(x * inv, -127.0), 127.0)
    tl.store(q_ptr + row * N + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, amax / 127.0)


@triton.jit
def _quant_chunked_kernel(x_ptr, q_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.abs(tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)))
    amax = tl.maximum(tl.max(m, axis=0), 1e-10)
    inv = tl.div_rn(127.0, amax)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        q = tl.minimum(tl.maximum(_round_half_even(x * inv), -127.0), 127.0)
        tl.store(q_ptr + row * N + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, amax / 127.0)


def int8_quant_per_token(x):
    M, N = x.shape
    q = torch.empty((M, N), dtype=torch.int8, device=x.device)
    scale = torch.empty(M, dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(N)
    if block <= 16384:
        warps = min(16, max(4, block * x.element_size() // 1024))
        _quant_row_kernel[(M,)](x, q, scale, N, BLOCK=block, num_warps=warps)
    else:
        _quant_chunked_kernel[(M,)](x, q, scale, N, BLOCK=4096, num_warps=16)
    return q, scale
