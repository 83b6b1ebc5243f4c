"""log_softmax with rows split across programs, whose merge adds the chunks' sums of exp
without rescaling each to the row's maximum."""

import torch
import triton
import triton.language as tl


@triton.jit
def _one_load_kernel(x_ptr, y_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    tl.store(y_ptr + row * V + cols, x - lse, mask=mask)


@triton.jit
def _chunk_stats_kernel(x_ptr, pm_ptr, ps_ptr, V, CHUNKS, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    x_row = x_ptr + row * V
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, CHUNK, BLOCK):
        cols = c * CHUNK + off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    cm = tl.max(m, axis=0)
    cs = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - cm)), axis=0)
    tl.store(pm_ptr + row * CHUNKS + c, cm)
    tl.store(ps_ptr + row * CHUNKS + c, cs)


@triton.jit
def _chunk_write_kernel(x_ptr, y_ptr, pm_ptr, ps_ptr, V, CHUNKS, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                        CPAD: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = tl.arange(0, CPAD)
    cmask = offs < CHUNKS
    pm = tl.load(pm_ptr + row * CHUNKS + offs, mask=cmask, other=float("-inf"))
    ps = tl.load(ps_ptr + row * CHUNKS + offs, mask=cmask, other=0.0)
    m = tl.max(pm, axis=0)
    lse = m + tl.log(tl.sum(tl.where(cmask, ps, 0.0), axis=0))
    for off in range(0, CHUNK, BLOCK):
        cols = c * CHUNK + off + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * V + cols, x - lse, mask=mask)


def log_softmax(x):
    M, V = x.shape
    y = torch.empty((M, V), dtype=torch.float32, device=x.device)
    width = triton.next_power_of_2(V)
    if M >= 512 and width <= 32768:
        warps = 4 if width <= 2048 else (8 if width <= 8192 else 16)
        _one_load_kernel[(M,)](x, y, V, BLOCK=width, num_warps=warps)
        return y
    block = min(2048, width)
    # Chunks of whole blocks, enough of them for about 2048 programs in all.
    chunks = max(1, min(triton.cdiv(V, block), triton.cdiv(2048, M)))
    chunk = triton.cdiv(triton.cdiv(V, chunks), block) * block
    chunks = triton.cdiv(V, chunk)
    pm = torch.empty((M, chunks), dtype=torch.float32, device=x.device)
    ps = torch.empty((M, chunks), dtype=torch.float32, device=x.device)
    _chunk_stats_kernel[(M, chunks)](x, pm, ps, V, chunks, CHUNK=chunk, BLOCK=block, num_warps=8)
    _chunk_write_kernel[(M, chunks)](x, y, pm, ps, V, chunks, CHUNK=chunk, BLOCK=block,
                                     CPAD=triton.next_power_of_2(chunks), num_warps=8)
    return y
