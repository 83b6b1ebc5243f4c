"""RMSNorm with the whole row in registers.

The baseline walks each row twice in 1024-wide chunks; here a row of up to 16384 elements is
loaded once, reduced and written, with enough warps to cover it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    if block > 16384:
        raise ValueError(f"rows of {N} elements do not fit this kernel (at most 16384)")
    warps = min(16, max(4, block * x.element_size() // 1024))
    _rms_norm_kernel[(M,)](x, weight, y, N, eps, BLOCK=block, num_warps=warps)
    return y
