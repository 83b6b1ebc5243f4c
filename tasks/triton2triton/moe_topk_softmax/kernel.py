"""moe_topk_softmax: MoE router top-k expert selection with softmax weights over the chosen experts."""

import torch
import triton
import triton.language as tl


@triton.jit
def _topk_softmax_kernel(g_ptr, w_ptr, ids_ptr, E, K: tl.constexpr, EP: tl.constexpr, KP: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, EP)
    x = tl.load(g_ptr + t * E + cols, mask=cols < E, other=float("-inf")).to(tl.float32)
    slots = tl.arange(0, KP)
    top_v = tl.full([KP], float("-inf"), dtype=tl.float32)
    top_i = tl.zeros([KP], dtype=tl.int32)
    for k in tl.static_range(K):
        m = tl.max(x, axis=0)
        i = tl.min(tl.where(x == m, cols, EP), axis=0)
        top_v = tl.where(slots == k, m, top_v)
        top_i = tl.where(slots == k, i, top_i)
        x = tl.where(cols == i, float("-inf"), x)
    e = tl.where(slots < K, tl.exp(top_v - tl.max(top_v, axis=0)), 0.0)
    w = e / tl.sum(e, axis=0)
    tl.store(w_ptr + t * K + slots, w, mask=slots < K)
    tl.store(ids_ptr + t * K + slots, top_i, mask=slots < K)


def moe_topk_softmax(gating, K):
    """(weights (T, K) float32, expert ids (T, K) int32) for (T, E) router logits."""
    T, E = gating.shape
    weights = torch.empty((T, K), dtype=torch.float32, device=gating.device)
    ids = torch.empty((T, K), dtype=torch.int32, device=gating.device)
    _topk_softmax_kernel[(T,)](gating, weights, ids, E, K=K, EP=triton.next_power_of_2(E),
                               KP=triton.next_power_of_2(K), num_warps=1)
    return weights, ids
