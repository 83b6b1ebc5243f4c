"""embedding: out[t, :] = weight[ids[t], :] for (T,) int64 ids and a contiguous (V, H) table."""

import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_kernel(ids_ptr, weight_ptr, out_ptr, H, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    token = tl.load(ids_ptr + t)
    src = weight_ptr + token * H
    dst = out_ptr + t.to(tl.int64) * H
    for start in range(0, H, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < H
        tl.store(dst + cols, tl.load(src + cols, mask=mask), mask=mask)


def embedding(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Rows of `weight` at `ids`; returns a new (T, H) tensor of weight's dtype."""
    T = ids.shape[0]
    H = weight.shape[1]
    out = torch.empty((T, H), dtype=weight.dtype, device=weight.device)
    _embedding_kernel[(T,)](ids, weight, out, H, BLOCK=64)
    return out
