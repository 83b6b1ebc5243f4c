"""spec_decode_verify: rejection-sampling verification of speculative-decoding draft tokens."""

import torch
import triton
import triton.language as tl


@triton.jit
def _verify_kernel(ids_ptr, q_ptr, p_ptr, u_ptr, noise_ptr, bonus_ptr, out_ptr, K, V, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    rejected = tl.zeros([], dtype=tl.int32)
    for k in range(0, K):
        out_k = out_ptr + b * (K + 1) + k
        if rejected != 0:
            tl.store(out_k, -1)
        else:
            d = tl.load(ids_ptr + b * K + k)
            row = (b * K + k) * V
            p = tl.load(p_ptr + row + d)
            q = tl.load(q_ptr + row + d)
            u = tl.load(u_ptr + b * K + k)
            if u * q <= p:
                tl.store(out_k, d)
            else:
                # Recovered token: argmax_v max(p - q, 0) * noise, the smallest v on ties.
                best = tl.full([], -1.0, dtype=tl.float32)
                best_idx = tl.zeros([], dtype=tl.int32)
                for start in range(0, V, BLOCK):
                    cols = start + offs
                    mask = cols < V
                    pv = tl.load(p_ptr + row + cols, mask=mask, other=0.0)
                    qv = tl.load(q_ptr + row + cols, mask=mask, other=0.0)
                    nv = tl.load(noise_ptr + b * V + cols, mask=mask, other=0.0)
                    s = tl.where(mask, tl.maximum(pv - qv, 0.0) * nv, -1.0)
                    m = tl.max(s, axis=0)
                    i = tl.min(tl.where(s == m, cols, V), axis=0)
                    best_idx = tl.where(m > best, i, best_idx)
                    best = tl.maximum(best, m)
                tl.store(out_k, best_idx)
                rejected = rejected + 1
    last = out_ptr + b * (K + 1) + K
    if rejected != 0:
        tl.store(last, -1)
    else:
        tl.store(last, tl.load(bonus_ptr + b))


def spec_decode_verify(draft_ids, draft_probs, target_probs, uniform, noise, bonus_ids):
    """(B, K + 1) int32: the accepted draft tokens, then the recovered or bonus token, then -1."""
    B, K = draft_ids.shape
    V = draft_probs.shape[2]
    out = torch.empty((B, K + 1), dtype=torch.int32, device=draft_ids.device)
    _verify_kernel[(B,)](draft_ids, draft_probs, target_probs, uniform, noise, bonus_ids, out, K, V, BLOCK=4096,
                         num_warps=8)
    return out
