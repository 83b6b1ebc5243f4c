"""spmm_csr: CSR sparse matrix (given by row lengths) times a dense (K, D) matrix."""

import torch
import triton
import triton.language as tl


@triton.jit
def _spmm_kernel(indptr_ptr, cols_ptr, vals_ptr, b_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    # One program per (row, BLOCK_D output columns); the row's nonzeros one after the other.
    r = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = d < D
    start = tl.load(indptr_ptr + r)
    end = tl.load(indptr_ptr + r + 1)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for j in range(start, end):
        c = tl.load(cols_ptr + j).to(tl.int64)
        v = tl.load(vals_ptr + j).to(tl.float32)
        acc += v * tl.load(b_ptr + c * D + d, mask=dmask, other=0.0).to(tl.float32)
    tl.store(out_ptr + r.to(tl.int64) * D + d, acc.to(out_ptr.dtype.element_ty), mask=dmask)


def spmm_csr(counts: torch.Tensor, cols: torch.Tensor, vals: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """out[r] = sum of vals[j] * b[cols[j]] over row r's counts[r] nonzeros; a new (R, D) tensor."""
    R = counts.shape[0]
    D = b.shape[1]
    indptr = torch.zeros(R + 1, dtype=torch.int32, device=counts.device)
    indptr[1:] = torch.cumsum(counts, 0)
    out = torch.empty((R, D), dtype=b.dtype, device=b.device)
    block_d = 64
    _spmm_kernel[(R, triton.cdiv(D, block_d))](indptr, cols, vals, b, out, D, BLOCK_D=block_d)
    return out
