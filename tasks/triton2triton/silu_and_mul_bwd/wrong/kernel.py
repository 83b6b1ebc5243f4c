"""silu_and_mul_bwd, fused, taking the derivative of silu(g) as sigmoid(g) (it drops the
g * s * (1 - s) term)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _bwd_kernel(gate_ptr, up_ptr, dout_ptr, dgate_ptr, dup_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = tl.load(dout_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(g)
    tl.store(dgate_ptr + offs, (d * u * s).to(dgate_ptr.dtype.element_ty), mask=mask)
    tl.store(dup_ptr + offs, (d * g * s).to(dup_ptr.dtype.element_ty), mask=mask)


def silu_and_mul_bwd(gate, up, dout):
    n = gate.numel()
    dgate = torch.empty_like(gate)
    dup = torch.empty_like(gate)
    block = 4096
    _bwd_kernel[(triton.cdiv(n, block),)](gate, up, dout, dgate, dup, n, BLOCK=block, num_warps=8)
    return dgate, dup
