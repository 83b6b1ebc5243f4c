"""Reference for spec_decode_verify: accept draft tokens left to right, then place the recovered
token (or the bonus token) and pad with -1. Float32 comparisons, as the task states them."""

import torch


def spec_decode_verify(draft_ids, draft_probs, target_probs, uniform, noise, bonus_ids):
    B, K = draft_ids.shape
    ids = draft_ids.long()
    p = target_probs.gather(2, ids[:, :, None])[:, :, 0]
    q = draft_probs.gather(2, ids[:, :, None])[:, :, 0]
    accept = (uniform * q) <= p
    # a[b]: the number of leading accepted positions.
    a = torch.cumprod(accept.to(torch.int64), dim=1).sum(dim=1)
    out = torch.full((B, K + 1), -1, dtype=torch.int32, device=draft_ids.device)
    for b in range(B):
        n = int(a[b])
        out[b, :n] = draft_ids[b, :n]
        if n == K:
            out[b, K] = bonus_ids[b]
        else:
            score = torch.clamp(target_probs[b, n] - draft_probs[b, n], min=0.0) * noise[b]
            best = score.max()
            out[b, n] = int((score == best).nonzero()[0, 0])
    return out
