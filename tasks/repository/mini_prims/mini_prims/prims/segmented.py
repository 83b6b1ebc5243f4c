"""Segmented reduction: the sum of each contiguous segment of a float32 vector."""

import torch
import triton
import triton.language as tl


@triton.jit
def _segmented_sum_kernel(x_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    start = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    total = tl.zeros([], dtype=tl.float32)
    for base in range(start, end, BLOCK):
        offs = base + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < end, other=0.0)
        total += tl.sum(x, axis=0)
    tl.store(out_ptr + seg, total)


def segmented_sum(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """(S,) float32: out[s] = x[offsets[s]:offsets[s + 1]].sum() for (S + 1,) int32 offsets,
    non-decreasing, within x; accumulated in float32."""
    num_segments = offsets.numel() - 1
    out = torch.empty(num_segments, dtype=torch.float32, device=x.device)
    _segmented_sum_kernel[(num_segments,)](x, offsets, out, BLOCK=1024)
    return out
