"""silu_and_mul_bwd: backward of the gated activation out = silu(gate) * up."""

import torch
import triton
import triton.language as tl


@triton.jit
def _dup_kernel(gate_ptr, dout_ptr, dup_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = tl.load(dout_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(dup_ptr + offs, (d * g * tl.sigmoid(g)).to(dup_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _dgate_kernel(gate_ptr, up_ptr, dout_ptr, dgate_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = tl.load(dout_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(g)
    tl.store(dgate_ptr + offs, (d * u * s * (1.0 + g * (1.0 - s))).to(dgate_ptr.dtype.element_ty), mask=mask)


def silu_and_mul_bwd(gate, up, dout):
    """(dgate, dup) for contiguous (M, N) gate, up and upstream gradient dout of one dtype."""
    n = gate.numel()
    dgate = torch.empty_like(gate)
    dup = torch.empty_like(gate)
    block = 1024
    grid = (triton.cdiv(n, block),)
    _dup_kernel[grid](gate, dout, dup, n, BLOCK=block)
    _dgate_kernel[grid](gate, up, dout, dgate, n, BLOCK=block)
    return dgate, dup
