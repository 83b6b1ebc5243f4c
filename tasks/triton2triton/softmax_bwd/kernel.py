"""softmax_bwd: the gradient of a row-wise softmax with respect to its input."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_dot_kernel(y_ptr, dy_ptr, dot_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        y = tl.load(y_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        acc += y * dy
    tl.store(dot_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def _grad_kernel(y_ptr, dy_ptr, dot_ptr, dx_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    y = tl.load(y_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.load(dot_ptr + row)
    tl.store(dx_ptr + row * N + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)


def softmax_bwd(y, dy):
    """dx for softmax output y and upstream gradient dy, contiguous (M, N) of one dtype."""
    M, N = y.shape
    dot = torch.empty(M, dtype=torch.float32, device=y.device)
    dx = torch.empty_like(y)
    block = 2048
    _row_dot_kernel[(M,)](y, dy, dot, N, BLOCK=block, num_warps=8)
    _grad_kernel[(M, triton.cdiv(N, block))](y, dy, dot, dx, N, BLOCK=block, num_warps=8)
    return dx
