"""Gradient clipping by a global norm."""

import torch
import triton
import triton.language as tl

_BLOCK = 1024


@triton.jit
def _clip_coef_kernel(norm_ptr, coef_ptr, max_norm):
    norm = tl.load(norm_ptr)
    tl.store(coef_ptr, tl.minimum(max_norm / (norm + 1e-6), 1.0))


@triton.jit
def _scale_kernel(g_ptr, coef_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    coef = tl.load(coef_ptr)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    tl.store(g_ptr + offs, g * coef, mask=mask)


def clip_coefficient(norm: torch.Tensor, max_norm: float) -> torch.Tensor:
    """min(max_norm / (norm + 1e-6), 1) as a one-element float32 tensor."""
    coef = torch.empty((1,), dtype=torch.float32, device=norm.device)
    _clip_coef_kernel[(1,)](norm, coef, max_norm)
    return coef


def scale_(grads: list[torch.Tensor], coef: torch.Tensor) -> None:
    """Multiplies every contiguous float32 tensor in grads by the one-element coef, in place."""
    for g in grads:
        _scale_kernel[(triton.cdiv(g.numel(), _BLOCK),)](g, coef, g.numel(), BLOCK=_BLOCK)
