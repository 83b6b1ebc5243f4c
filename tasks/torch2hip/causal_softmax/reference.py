"""The operation to implement: causal attention probabilities, softmax(scale * scores) with every
key after the query masked out, per row of (Z, S, S) float32 scores."""

import torch


def causal_softmax(x: torch.Tensor, scale: float) -> torch.Tensor:
    S = x.shape[-1]
    future = torch.ones(S, S, dtype=torch.bool, device=x.device).triu(1)
    return torch.softmax((x.float() * scale).masked_fill(future, float("-inf")), dim=-1)
