"""segmented_sum: sums of the consecutive variable-length segments of a vector, given their lengths."""

import torch
import triton
import triton.language as tl


@triton.jit
def _segment_sum_kernel(x_ptr, ends_ptr, counts_ptr, out_ptr, BLOCK: tl.constexpr):
    # One program per segment, which it walks in chunks of BLOCK elements.
    s = tl.program_id(0)
    n = tl.load(counts_ptr + s)
    start = tl.load(ends_ptr + s) - n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, n, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + start + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + s, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def segmented_sum(x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """out[s]: the sum of the counts[s] elements of x after those of segments 0..s-1; (S,) like x."""
    S = counts.shape[0]
    ends = torch.cumsum(counts, 0)  # int64: end of each segment
    out = torch.empty(S, dtype=x.dtype, device=x.device)
    _segment_sum_kernel[(S,)](x, ends, counts, out, BLOCK=256, num_warps=2)
    return out
