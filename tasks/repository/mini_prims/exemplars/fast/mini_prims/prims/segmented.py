"""Segmented sum with every segment split across programs: the work spreads over the GPU
whatever the number of segments.

The baseline runs one program per segment, so 8 experts sharing half a million entries keep 8 of
132 SMs busy, each walking 64K entries one dependent 4 KB load and reduction at a time. Here
program (s, p) sums the p-th of SPLIT equal shares of segment s into a (segments, SPLIT) table
of partial sums that a second, small kernel adds up in a fixed order: every call gives the same
bits, and no float atomics. SPLIT gives evenly filled segments about 512 entries a program (a
thousand or two programs for the timed shapes, one wave); a share is proportional to its
segment's length, so a skewed segment is split SPLIT ways too.
"""

import torch
import triton
import triton.language as tl

SHARE = 512  # entries a program reads when the segments are evenly filled
MAX_SPLIT = 256


@triton.jit
def _segment_partials_kernel(x_ptr, offsets_ptr, partials_ptr, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    part = tl.program_id(1)
    start = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    share = (end - start + SPLIT - 1) // SPLIT
    lo = start + part * share
    hi = tl.minimum(lo + share, end)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for base in range(lo, hi, BLOCK):
        offs = base + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < hi, other=0.0)
    tl.store(partials_ptr + seg * SPLIT + part, tl.sum(acc, axis=0))


@triton.jit
def _segment_totals_kernel(partials_ptr, out_ptr, num_segments, SPLIT: tl.constexpr, SEGS: tl.constexpr):
    segs = tl.program_id(0) * SEGS + tl.arange(0, SEGS)
    parts = tl.arange(0, SPLIT)
    mask = segs < num_segments
    partials = tl.load(partials_ptr + segs[:, None] * SPLIT + parts[None, :], mask=mask[:, None], other=0.0)
    tl.store(out_ptr + segs, tl.sum(partials, axis=1), mask=mask)


def segmented_sum(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    num_segments = offsets.numel() - 1
    out = torch.empty(num_segments, dtype=torch.float32, device=x.device)
    if num_segments <= 0:
        return out
    split = min(MAX_SPLIT, triton.next_power_of_2(triton.cdiv(max(1, x.numel()), num_segments * SHARE)))
    partials = torch.empty(num_segments * split, dtype=torch.float32, device=x.device)
    _segment_partials_kernel[(num_segments, split)](x, offsets, partials, SPLIT=split, BLOCK=1024, num_warps=4)
    segs = max(1, min(triton.next_power_of_2(num_segments), 4096 // split))
    _segment_totals_kernel[(triton.cdiv(num_segments, segs),)](partials, out, num_segments, SPLIT=split, SEGS=segs,
                                                               num_warps=4)
    return out
