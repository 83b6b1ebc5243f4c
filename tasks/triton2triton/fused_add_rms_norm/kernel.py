"""fused_add_rms_norm: residual add followed by RMSNorm, for (M, N) activations."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, r_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x + r).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    y_row = y_ptr + row * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual, weight, eps):
    """(rms_norm(x + residual) * weight, x + residual) for contiguous (M, N) tensors of one dtype."""
    M, N = x.shape
    r = torch.empty_like(x)
    y = torch.empty_like(x)
    block = 1024
    _add_kernel[(triton.cdiv(M * N, block),)](x, residual, r, M * N, BLOCK=block)
    _rms_norm_kernel[(M,)](r, weight, y, N, eps, BLOCK=block)
    return y, r
