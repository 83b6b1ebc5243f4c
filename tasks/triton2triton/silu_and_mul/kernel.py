"""silu_and_mul: out = silu(gate) * up, elementwise over (M, N) matrices."""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_kernel(gate_ptr, act_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(act_ptr + offs, g * tl.sigmoid(g), mask=mask)


@triton.jit
def _mul_kernel(act_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(act_ptr + offs, mask=mask, other=0.0)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (a * u).to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up for contiguous (M, N) tensors of one dtype; returns a new (M, N) tensor."""
    n = gate.numel()
    act = torch.empty(gate.shape, dtype=torch.float32, device=gate.device)
    out = torch.empty_like(gate)
    block = 1024
    grid = (triton.cdiv(n, block),)
    _silu_kernel[grid](gate, act, n, BLOCK=block)
    _mul_kernel[grid](act, up, out, n, BLOCK=block)
    return out
