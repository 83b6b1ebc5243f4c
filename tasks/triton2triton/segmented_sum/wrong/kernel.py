"""segmented_sum with a group of segments per program that counts its steps with a floor division
(longest // BLOCK): the last partial chunk of the group's longest segment, and with it every part
of the group's segments past the last whole chunk, is never added."""

import torch
import triton
import triton.language as tl


@triton.jit
def _segment_sum_kernel(x_ptr, ends_ptr, counts_ptr, out_ptr, S, G: tl.constexpr, BLOCK: tl.constexpr):
    seg = tl.program_id(0) * G + tl.arange(0, G)
    smask = seg < S
    n = tl.load(counts_ptr + seg, mask=smask, other=0)
    start = tl.load(ends_ptr + seg, mask=smask, other=0) - n
    steps = tl.max(n, axis=0) // BLOCK
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([G, BLOCK], dtype=tl.float32)
    for i in range(0, steps + (steps == 0)):
        offs = i * BLOCK + cols
        v = tl.load(x_ptr + start[:, None] + offs[None, :], mask=offs[None, :] < n[:, None], other=0.0)
        acc += v.to(tl.float32)
    tl.store(out_ptr + seg, tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty), mask=smask)


def segmented_sum(x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    S = counts.shape[0]
    ends = torch.cumsum(counts, 0)
    out = torch.empty(S, dtype=x.dtype, device=x.device)
    g, block = 8, 512
    _segment_sum_kernel[(triton.cdiv(S, g),)](x, ends, counts, out, S, G=g, BLOCK=block, num_warps=4)
    return out
