"""silu_and_mul, fused: one pass over gate and up.

The baseline writes silu(gate) to a float32 buffer and reads it back in a second kernel: 14 bytes
of traffic per element (bf16) where 6 suffice. Here one kernel reads gate and up once, computes in
registers and writes the output once, with a larger block per program.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    out = g * tl.sigmoid(g) * u
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    n = gate.numel()
    out = torch.empty_like(gate)
    block = 4096
    _silu_and_mul_kernel[(triton.cdiv(n, block),)](gate, up, out, n, BLOCK=block, num_warps=8)
    return out
