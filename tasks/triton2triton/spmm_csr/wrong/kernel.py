"""spmm_csr with single-warp rows whose row pointers come from an inclusive prefix sum of the row
lengths, read as if exclusive: row r walks counts[r] nonzeros starting where it should end, i.e.
at the first nonzero of row r + 1."""

import torch
import triton
import triton.language as tl


@triton.jit
def _spmm_kernel(
    ends_ptr, counts_ptr, cols_ptr, vals_ptr, b_ptr, out_ptr, D, BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr
):
    r = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = d < D
    start = tl.load(ends_ptr + r)
    end = start + tl.load(counts_ptr + r)
    acc = tl.zeros([BLOCK_J, BLOCK_D], dtype=tl.float32)
    for j0 in range(start, end, BLOCK_J):
        jj = j0 + tl.arange(0, BLOCK_J)
        jmask = jj < end
        c = tl.load(cols_ptr + jj, mask=jmask, other=0)
        v = tl.load(vals_ptr + jj, mask=jmask, other=0.0).to(tl.float32)
        tile = tl.load(
            b_ptr + c.to(tl.int64)[:, None] * D + d[None, :], mask=jmask[:, None] & dmask[None, :], other=0.0
        )
        acc += tile.to(tl.float32) * v[:, None]
    tl.store(out_ptr + r.to(tl.int64) * D + d, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=dmask)


def spmm_csr(counts: torch.Tensor, cols: torch.Tensor, vals: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    R = counts.shape[0]
    D = b.shape[1]
    ends = torch.cumsum(counts, 0).to(torch.int32)
    out = torch.empty((R, D), dtype=b.dtype, device=b.device)
    block_d = min(triton.next_power_of_2(D), 1024 // b.element_size())
    _spmm_kernel[(R, triton.cdiv(D, block_d))](
        ends, counts, cols, vals, b, out, D, BLOCK_J=8, BLOCK_D=block_d, num_warps=1
    )
    return out
