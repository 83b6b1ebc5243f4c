"""The operation to implement: GELU with the tanh approximation, elementwise."""

import torch


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    return torch.nn.functional.gelu(x.to(compute), approximate="tanh").to(x.dtype)
