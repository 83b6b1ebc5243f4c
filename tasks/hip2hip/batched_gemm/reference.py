"""Batched matrix product, accumulated in (at least) float32, rounded once to the inputs' dtype."""

import torch


def batched_gemm(a: torch.Tensor, bm: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(a.dtype, torch.float32)
    return torch.bmm(a.to(compute), bm.to(compute)).to(a.dtype)
