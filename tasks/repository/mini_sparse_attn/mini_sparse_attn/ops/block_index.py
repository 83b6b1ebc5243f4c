"""The block mask as a lookup table of key blocks per query block."""

import torch
import triton
import triton.language as tl


@triton.jit
def _mask_to_index_kernel(mask_ptr, counts_ptr, cols_ptr, NB, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.arange(0, BLOCK)
    m = tl.load(mask_ptr + row * NB + j, mask=j < NB, other=0).to(tl.int32)
    slot = tl.cumsum(m, axis=0) - 1
    tl.store(cols_ptr + row * NB + slot, j, mask=m != 0)
    tl.store(counts_ptr + row, tl.sum(m, axis=0))


def mask_to_index(mask: torch.Tensor):
    """(counts, columns) for an (H, NB, NB) 0/1 block mask: counts (H, NB) int32 holds the number of
    key blocks of each query block, columns (H, NB, NB) int32 their indices in increasing order in
    the first counts[h, i] slots of row (h, i), then zeros."""
    H, NB, _ = mask.shape
    counts = torch.empty((H, NB), dtype=torch.int32, device=mask.device)
    columns = torch.zeros((H, NB, NB), dtype=torch.int32, device=mask.device)
    _mask_to_index_kernel[(H * NB,)](mask, counts, columns, NB, BLOCK=triton.next_power_of_2(NB))
    return counts, columns
