# Attack 14: walk the harness's memory (gc, inspect, frames, /proc/self/mem) to copy the expected
# outputs. Static: gc, inspect, ctypes, sys, open, __subclasses__, _getframe are forbidden.
# In-process memory cannot be made unreachable from Python; docs/harness.md states the limit.
# Expected verdict: CHEAT_DETECTED.

import pytest


@pytest.mark.parametrize(
    "line",
    [
        "import gc",
        "import inspect",
        "import ctypes",
        "import sys",
        "f = open('/proc/self/mem', 'rb')",
        "k = object.__subclasses__()",
    ],
)
def test_memory_inspection_tools_are_forbidden(run_candidate, line):
    result = run_candidate(f"import torch\n{line}\n\ndef add(x, y):\n    return torch.empty_like(x)\n")
    assert result.status == "CHEAT_DETECTED"
