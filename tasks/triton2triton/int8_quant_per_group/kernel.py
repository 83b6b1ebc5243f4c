"""int8_quant_per_group: dynamic symmetric int8 quantisation of each 128-wide group of each row."""

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
def _quant_group_kernel(x_ptr, q_ptr, scale_ptr, N, NG, GROUP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1)
    cols = g * GROUP + tl.arange(0, GROUP)
    x = tl.load(x_ptr + row * N + cols).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10)
    inv = tl.div_rn(127.0, amax)
    q = tl.minimum(tl.maximum(_round_half_even(x * inv), -127.0), 127.0)
    tl.store(q_ptr + row * N + cols, q.to(tl.int8))
    tl.store(scale_ptr + row * NG + g, amax / 127.0)


def int8_quant_per_group(x):
    """(q (M, N) int8, scales (M, N / 128) float32) for a contiguous (M, N) x, N a multiple of 128."""
    M, N = x.shape
    group = 128
    q = torch.empty((M, N), dtype=torch.int8, device=x.device)
    scales = torch.empty((M, N // group), dtype=torch.float32, device=x.device)
    _quant_group_kernel[(M, N // group)](x, q, scales, N, N // group, GROUP=group, num_warps=2)
    return q, scales
