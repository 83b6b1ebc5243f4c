"""log_softmax: float32 log-probabilities of each row of (M, V) logits."""

import torch
import triton
import triton.language as tl


@triton.jit
def _log_softmax_kernel(x_ptr, y_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    y_row = y_ptr + row * V
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, x - lse, mask=mask)


def log_softmax(x):
    """log_softmax over the last dim of contiguous (M, V) logits; returns float32 (M, V)."""
    M, V = x.shape
    y = torch.empty((M, V), dtype=torch.float32, device=x.device)
    _log_softmax_kernel[(M,)](x, y, V, BLOCK=2048, num_warps=8)
    return y
