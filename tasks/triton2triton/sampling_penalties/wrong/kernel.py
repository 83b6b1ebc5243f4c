"""sampling_penalties that applies the repetition penalty as a division whatever the sign of the
logit (x / rep also for x <= 0, which moves negative logits up instead of down)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _count_kernel(tokens_ptr, counts_ptr, V, L, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = j < L
    ids = tl.load(tokens_ptr + t * L + j, mask=mask, other=0)
    tl.atomic_add(counts_ptr + t * V + ids, 1, mask=mask)


@triton.jit
def _apply_kernel(logits_ptr, counts_ptr, out_ptr, V, rep, freq, pres, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    v = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = v < V
    x = tl.load(logits_ptr + t * V + v, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(counts_ptr + t * V + v, mask=mask, other=0)
    penalised = x / rep - freq * c.to(tl.float32) - pres
    tl.store(out_ptr + t * V + v, tl.where(c > 0, penalised, x).to(out_ptr.dtype.element_ty), mask=mask)


def sampling_penalties(logits, tokens, rep, freq, pres):
    T, V = logits.shape
    L = tokens.shape[1]
    counts = torch.zeros((T, V), dtype=torch.int32, device=logits.device)
    _count_kernel[(T, triton.cdiv(L, 256))](tokens, counts, V, L, BLOCK=256)
    out = torch.empty_like(logits)
    block = 1024
    _apply_kernel[(T, triton.cdiv(V, block))](logits, counts, out, V, rep, freq, pres, BLOCK=block)
    return out
