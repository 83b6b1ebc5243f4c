"""A loaded entry the harness can call the same way whatever the backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch

Invoke = Callable[[Sequence[torch.Tensor], Mapping[str, Any], Sequence[torch.Tensor], Mapping[str, int]], object]


@dataclass(frozen=True)
class Kernel:
    """invoke(inputs, scalars, outputs, dims) calls the entry once on the current stream.

    Python entries ignore `outputs` and return their outputs; HIP launchers write into the
    harness-allocated `outputs` and return the hipError_t code (0 = success). Outputs declared
    `inplace` are neither returned nor allocated: the entry writes them into their inputs, and
    the harness reads them there (check.with_written).
    """

    label: str  # baseline | candidate | reference
    invoke: Invoke
    harness_outputs: bool  # True: the harness allocates (and poisons) the outputs
