"""Gather: out[i] = src[index[i]]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, index_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(index_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(src_ptr + idx, mask=mask), mask=mask)


def gather(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """src[index] for a 1-D src and 1-D int32 index (every index valid); src's dtype."""
    n = index.numel()
    out = torch.empty(n, dtype=src.dtype, device=src.device)
    block = 1024
    _gather_kernel[(triton.cdiv(n, block),)](src, index, out, n, BLOCK=block)
    return out
