"""gather_logprobs in one online pass over the logits, in base 2, that rescales the entropy accumulator
by the same factor as the normaliser when the running maximum grows but forgets the shift s * d that its
(w - m) terms also owe.
"""

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def _logprobs_kernel(logits_ptr, ids_ptr, logprob_ptr, entropy_ptr, V, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * V
    # A finite start, so that the first rescaling multiplies zeros by a finite shift.
    m = -1.0e30
    s = tl.zeros([BLOCK], dtype=tl.float32)
    t = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        w = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32) * scale
        m_new = tl.maximum(m, tl.max(w, axis=0))
        d = m - m_new
        alpha = tl.math.exp2(d)
        t = alpha * t
        s = alpha * s
        e = tl.math.exp2(w - m_new)
        s += e
        t += tl.where(mask, e * (w - m_new), 0.0)
        m = m_new
    total = tl.sum(s, axis=0)
    log2_total = tl.math.log2(total)
    picked = tl.load(x_row + tl.load(ids_ptr + row)).to(tl.float32) * scale
    tl.store(logprob_ptr + row, (picked - m - log2_total) * LN2)
    tl.store(entropy_ptr + row, (log2_total - tl.sum(t, axis=0) / total) * LN2)


def gather_logprobs(logits: torch.Tensor, ids: torch.Tensor, temperature: float = 0.8):
    M, V = logits.shape
    logprob = torch.empty(M, dtype=torch.float32, device=logits.device)
    entropy = torch.empty(M, dtype=torch.float32, device=logits.device)
    block = min(4096, triton.next_power_of_2(V))
    warps = 16 if block >= 4096 else 4
    _logprobs_kernel[(M,)](logits, ids, logprob, entropy, V, LOG2E / temperature, BLOCK=block, num_warps=warps)
    return logprob, entropy
