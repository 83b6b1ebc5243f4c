"""NCHW -> NHWC (channels-last) layout transform; values copied exactly."""

import torch


def nchw_to_nhwc(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 2, 3, 1).contiguous()
