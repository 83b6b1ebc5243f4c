"""moe_permute: gather token rows into the expert-sorted, block-padded order of the routing slots."""

import torch
import triton
import triton.language as tl


@triton.jit
def _permute_kernel(x_ptr, ids_ptr, out_ptr, T, H, K, BLOCK: tl.constexpr):
    # One program per slot: copy the slot's token row (padding slots keep their zeros).
    i = tl.program_id(0).to(tl.int64)
    s = tl.load(ids_ptr + i)
    if s < T * K:
        t = (s // K).to(tl.int64)
        for h0 in range(0, H, BLOCK):
            cols = h0 + tl.arange(0, BLOCK)
            mask = cols < H
            tl.store(out_ptr + i * H + cols, tl.load(x_ptr + t * H + cols, mask=mask), mask=mask)


def moe_permute(x, sorted_ids, K):
    """(M, H): x[sorted_ids[i] // K] for each real slot i, zeros for padding slots."""
    T, H = x.shape
    M = sorted_ids.shape[0]
    out = torch.zeros((M, H), dtype=x.dtype, device=x.device)
    _permute_kernel[(M,)](x, sorted_ids, out, T, H, K, BLOCK=256, num_warps=4)
    return out
