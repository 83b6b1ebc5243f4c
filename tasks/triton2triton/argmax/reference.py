"""Reference for argmax: the index of each row's maximum, the first one on ties."""

import torch


def argmax(x):
    return torch.argmax(x, dim=-1)
