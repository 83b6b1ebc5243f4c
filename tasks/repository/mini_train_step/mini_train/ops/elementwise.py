"""Elementwise ops of the forward and backward passes; each returns a new contiguous tensor."""

import torch
import triton
import triton.language as tl

_BLOCK = 1024


@triton.jit
def _cast_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_backward_kernel(g_ptr, a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    tl.store(out_ptr + offs, (g * (s * (1.0 + a * (1.0 - s)))).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mse_grad_kernel(y_ptr, t_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, ((y - t) * scale).to(out_ptr.dtype.element_ty), mask=mask)


def _grid(n):
    return (triton.cdiv(n, _BLOCK),)


def cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x converted to dtype (round to nearest)."""
    y = torch.empty(x.shape, dtype=dtype, device=x.device)
    _cast_kernel[_grid(x.numel())](x, y, x.numel(), BLOCK=_BLOCK)
    return y


def silu(x: torch.Tensor) -> torch.Tensor:
    """x * sigmoid(x), computed in float32 and rounded to x's dtype."""
    y = torch.empty_like(x)
    _silu_kernel[_grid(x.numel())](x, y, x.numel(), BLOCK=_BLOCK)
    return y


def silu_backward(grad: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """grad * silu'(a) = grad * s * (1 + a * (1 - s)) with s = sigmoid(a), computed in float32 and
    rounded to grad's dtype."""
    out = torch.empty_like(grad)
    _silu_backward_kernel[_grid(grad.numel())](grad, a, out, grad.numel(), BLOCK=_BLOCK)
    return out


def mse_grad(y: torch.Tensor, target: torch.Tensor, scale: float) -> torch.Tensor:
    """(y - target) * scale, computed in float32 and rounded to y's dtype."""
    out = torch.empty_like(y)
    _mse_grad_kernel[_grid(y.numel())](y, target, out, y.numel(), scale, BLOCK=_BLOCK)
    return out
