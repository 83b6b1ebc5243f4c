"""top_k_mask by radix select: four 8-bit digit passes instead of 32 one-bit passes.

The baseline finds each row's K-th largest value by bisection on the 32 bits of its sort key:
32 counting passes over the row, then a write pass. Here the key is resolved 8 bits at a time:
each pass builds an on-chip 256-bin histogram (tl.histogram) of the next digit among the
elements that share the digits found so far, and picks the digit holding the K-th largest from
the histogram's suffix sums, so 4 passes plus the write pass cover the row.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _sort_key(x):
    # Float32 bits mapped to an int64 in [0, 2**32) whose order is the order of the floats.
    bits = x.to(tl.int32, bitcast=True)
    return (bits ^ ((bits >> 31) & 0x7FFFFFFF)).to(tl.int64) + 2147483648


@triton.jit
def _top_k_mask_kernel(x_ptr, out_ptr, V, K, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    bins = tl.arange(0, 256)
    prefix = row * 0
    need = K
    for d in tl.static_range(4):
        shift = 24 - 8 * d
        hist = tl.zeros([256], dtype=tl.int32)
        for start in range(0, V, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < V
            key = _sort_key(tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32))
            match = mask & ((key >> (shift + 8)) == (prefix >> (shift + 8)))
            hist += tl.histogram(((key >> shift) & 255).to(tl.int32), 256, mask=match)
        # at_least[b]: how many matching keys have this digit >= b.
        at_least = tl.sum(hist, axis=0) - tl.cumsum(hist, axis=0) + hist
        b = tl.max(tl.where(at_least >= need, bins, -1), axis=0)
        above = tl.sum(tl.where(bins == b, at_least - hist, 0), axis=0)
        need = need - above
        prefix = prefix + (b.to(tl.int64) << shift)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        keep = _sort_key(x) >= prefix
        tl.store(out_ptr + row * V + cols, tl.where(keep, x, float("-inf")).to(out_ptr.dtype.element_ty), mask=mask)


def top_k_mask(x, K):
    M, V = x.shape
    out = torch.empty_like(x)
    _top_k_mask_kernel[(M,)](x, out, V, K, BLOCK=4096, num_warps=16)
    return out
