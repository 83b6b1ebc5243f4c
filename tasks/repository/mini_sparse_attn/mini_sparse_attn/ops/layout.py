"""The block layout of the sparse attention: which key blocks each query block sees."""

import torch
import triton
import triton.language as tl


@triton.jit
def _layout_kernel(rand_ptr, mask_ptr, NB, R, window, num_global, BLOCK: tl.constexpr):
    h = tl.program_id(1)
    i = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    keep = (tl.abs(i - j) <= window) | (i < num_global) | (j < num_global)
    row = (h * NB + i).to(tl.int64)
    for r in range(0, R):
        c = tl.load(rand_ptr + row * R + r)
        keep = keep | (j == c)
    tl.store(mask_ptr + row * NB + j, keep.to(tl.int8), mask=j < NB)


def build_layout(rand_blocks: torch.Tensor, window: int, num_global: int) -> torch.Tensor:
    """The (H, NB, NB) int8 block mask (1 = query block i sees key block j) from the (H, NB, R)
    random key blocks of each query block, a local window of `window` blocks on each side, and
    the first `num_global` blocks global (they see every block and every block sees them)."""
    H, NB, R = rand_blocks.shape
    mask = torch.empty((H, NB, NB), dtype=torch.int8, device=rand_blocks.device)
    _layout_kernel[(NB, H)](rand_blocks, mask, NB, R, window, num_global, BLOCK=triton.next_power_of_2(NB))
    return mask
