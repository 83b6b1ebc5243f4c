"""The operation to implement: RMS normalisation over the last dimension, with a weight."""

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    y = torch.nn.functional.rms_norm(x.to(compute), (x.shape[-1],), weight.to(compute), eps)
    return y.to(x.dtype)
