"""cross_entropy: per-row logsumexp of the logits minus the logit at the row's label."""

import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = logits_ptr + row.to(tl.int64) * V
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - row_max)
    lse = row_max + tl.log(tl.sum(s, axis=0))
    label = tl.load(labels_ptr + row)
    picked = tl.load(x_row + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - picked)


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per-row loss of contiguous (M, V) logits and (M,) int64 labels; returns (M,) float32."""
    M, V = logits.shape
    loss = torch.empty(M, dtype=torch.float32, device=logits.device)
    _cross_entropy_kernel[(M,)](logits, labels, loss, V, BLOCK=512)
    return loss
