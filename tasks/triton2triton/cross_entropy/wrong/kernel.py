"""cross_entropy, online, forgetting to rescale the running sum when the running max grows."""

import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * V
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s + tl.where(m_new != float("-inf"), tl.exp(x - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    label = tl.load(labels_ptr + row)
    picked = tl.load(x_row + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - picked)


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    M, V = logits.shape
    loss = torch.empty(M, dtype=torch.float32, device=logits.device)
    _cross_entropy_kernel[(M,)](logits, labels, loss, V, BLOCK=1024, num_warps=8)
    return loss
