"""Reference for spmm_csr: a sparse CSR matrix (row pointers from the row lengths) times the dense
b, in float32 (float64 for float64 inputs), rounded once."""

import torch


def spmm_csr(counts, cols, vals, b):
    acc = torch.promote_types(b.dtype, torch.float32)
    R = counts.shape[0]
    indptr = torch.zeros(R + 1, dtype=torch.int64, device=counts.device)
    indptr[1:] = torch.cumsum(counts.long(), 0)
    nnz = int(indptr[-1])
    a = torch.sparse_csr_tensor(indptr, cols[:nnz].long(), vals[:nnz].to(acc), size=(R, b.shape[0]), device=b.device)
    return (a @ b.to(acc)).to(b.dtype)
