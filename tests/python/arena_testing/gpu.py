"""The mark of a test that needs a GPU: skipped elsewhere, run by tests/gpu/run.sh on a GPU machine."""

from __future__ import annotations

import pytest
import torch

needs_gpu = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a GPU: run tests/gpu/run.sh on a GPU machine (docs/toolchain.md)"
)
