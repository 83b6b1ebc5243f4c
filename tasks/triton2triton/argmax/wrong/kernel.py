"""argmax with each row split across programs, whose merge takes the last chunk holding
the row maximum (so ties across chunks resolve to a later index)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _chunk_kernel(x_ptr, pv_ptr, pi_ptr, V, CHUNKS, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    best = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    best_i = tl.zeros([BLOCK], dtype=tl.int32)
    for off in range(0, CHUNK, BLOCK):
        cols = c * CHUNK + off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        better = x > best
        best = tl.where(better, x, best)
        best_i = tl.where(better, cols, best_i)
    m = tl.max(best, axis=0)
    idx = tl.min(tl.where(best == m, best_i, V), axis=0)
    tl.store(pv_ptr + row * CHUNKS + c, m)
    tl.store(pi_ptr + row * CHUNKS + c, idx)


@triton.jit
def _merge_kernel(pv_ptr, pi_ptr, out_ptr, V, CHUNKS, CPAD: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, CPAD)
    mask = offs < CHUNKS
    pv = tl.load(pv_ptr + row * CHUNKS + offs, mask=mask, other=float("-inf"))
    pi = tl.load(pi_ptr + row * CHUNKS + offs, mask=mask, other=V)
    m = tl.max(pv, axis=0)
    idx = tl.max(tl.where(pv == m, pi, -1), axis=0)
    tl.store(out_ptr + row, idx.to(tl.int64))


def argmax(x):
    M, V = x.shape
    out = torch.empty(M, dtype=torch.int64, device=x.device)
    block = min(2048, triton.next_power_of_2(V))
    chunks = max(1, min(triton.cdiv(V, block), triton.cdiv(2048, M)))
    chunk = triton.cdiv(triton.cdiv(V, chunks), block) * block
    chunks = triton.cdiv(V, chunk)
    pv = torch.empty((M, chunks), dtype=torch.float32, device=x.device)
    pi = torch.empty((M, chunks), dtype=torch.int32, device=x.device)
    _chunk_kernel[(M, chunks)](x, pv, pi, V, chunks, CHUNK=chunk, BLOCK=block, num_warps=8)
    _merge_kernel[(M,)](pv, pi, out, V, chunks, CPAD=triton.next_power_of_2(chunks))
    return out
