"""top_k_mask: top-k filtering of logits before sampling."""

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
    # The K-th largest key, one bit at a time from the top: the largest t with count(key >= t) >= K.
    prefix = row * 0
    step = prefix + 2147483648
    for _ in range(32):
        cand = prefix + step
        count = 0
        for start in range(0, V, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < V
            key = _sort_key(tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32))
            count += tl.sum((mask & (key >= cand)).to(tl.int32), axis=0)
        prefix = tl.where(count >= K, cand, prefix)
        step = step // 2
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        keep = _sort_key(x) >= prefix
        tl.store(out_ptr + row * V + cols, tl.where(keep, x, float("-inf")).to(out_ptr.dtype.element_ty), mask=mask)


def top_k_mask(x, K):
    """x where x >= the row's K-th largest value, else -inf; (M, V) like x."""
    M, V = x.shape
    out = torch.empty_like(x)
    _top_k_mask_kernel[(M,)](x, out, V, K, BLOCK=4096, num_warps=8)
    return out
