"""gather_logprobs: per-row log-probability of the sampled id and entropy of softmax(logits / temperature)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _logprobs_kernel(logits_ptr, ids_ptr, logprob_ptr, entropy_ptr, V, inv_t, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * V
    # Pass 1: the row maximum of z = logits / temperature.
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        z = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32) * inv_t
        m = tl.maximum(m, z)
    z_max = tl.max(m, axis=0)
    # Pass 2: the normaliser.
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        z = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32) * inv_t
        s += tl.exp(z - z_max)
    total = tl.sum(s, axis=0)
    lse = z_max + tl.log(total)
    # Pass 3: the expected value of z - max under the softmax (entropy = log(total) - that).
    ez = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        z = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * inv_t
        ez += tl.where(mask, tl.exp(z - z_max) * (z - z_max), 0.0)
    picked = tl.load(x_row + tl.load(ids_ptr + row)).to(tl.float32) * inv_t
    tl.store(logprob_ptr + row, picked - lse)
    tl.store(entropy_ptr + row, tl.log(total) - tl.sum(ez, axis=0) / total)


def gather_logprobs(logits: torch.Tensor, ids: torch.Tensor, temperature: float = 0.8):
    """(logprob (M,) float32, entropy (M,) float32) of contiguous (M, V) logits and (M,) int64 ids."""
    M, V = logits.shape
    logprob = torch.empty(M, dtype=torch.float32, device=logits.device)
    entropy = torch.empty(M, dtype=torch.float32, device=logits.device)
    _logprobs_kernel[(M,)](logits, ids, logprob, entropy, V, 1.0 / temperature, BLOCK=1024, num_warps=4)
    return logprob, entropy
