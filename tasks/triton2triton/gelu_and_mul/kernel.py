"""gelu_and_mul: tanh-GELU of the gate half of each row times its up half."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_and_mul_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * 2 * N
    out_row = out_ptr + row * N
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        g = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(x_row + N + cols, mask=mask, other=0.0).to(tl.float32)
        inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)
        # 0.5 * (1 + tanh(z)) == sigmoid(2 * z)
        y = g * tl.sigmoid(2.0 * inner) * u
        tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def gelu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """gelu_tanh(x[:, :N]) * x[:, N:] for a contiguous (M, 2N) tensor; returns a new (M, N) tensor."""
    M, N2 = x.shape
    N = N2 // 2
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    _gelu_and_mul_kernel[(M,)](x, out, N, BLOCK=256, num_warps=2)
    return out
