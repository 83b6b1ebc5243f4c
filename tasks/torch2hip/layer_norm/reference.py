"""The operation to implement: layer normalisation over the last dimension, with weight and bias."""

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    y = torch.nn.functional.layer_norm(
        x.to(compute), (x.shape[-1],), weight.to(compute), bias.to(compute), eps
    )
    return y.to(x.dtype)
