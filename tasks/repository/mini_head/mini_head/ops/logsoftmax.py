"""log_softmax over the last dim of float32 logits."""

import torch
import triton
import triton.language as tl


@triton.jit
def _log_softmax_kernel(x_ptr, y_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=float("-inf"))
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * V + cols, x - lse, mask=mask)


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log_softmax over the last dim of contiguous (M, V) float32 logits; float32 out."""
    M, V = x.shape
    y = torch.empty_like(x)
    _log_softmax_kernel[(M,)](x, y, V, BLOCK=2048, num_warps=8)
    return y
