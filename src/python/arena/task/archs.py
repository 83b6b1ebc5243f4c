"""The GPU architectures a task is declared for (its `archs`), and whether a device is one of them.

A task's baseline, tolerances and exemplars are written and validated for the architectures it
names: `sm_NN` (NVIDIA, compute capability N.N; `sm_90a` its arch-specific form) and `gfxNNN`
(AMD). A device runs the task when it is of a family the task names, and of a line those
architectures speak for:
- CUDA: a compute capability at least the lowest declared (sm_90: Hopper and later, whose
  instructions include Hopper's), or exactly one declared arch-specific (sm_90a: Hopper alone,
  whose wgmma later GPUs lack);
- ROCm: the same major line as a declared one (gfx942 stands for gfx9, CDNA with 64-wide
  wavefronts; RDNA's gfx10-12 run 32-wide ones that a kernel written for 64 gets wrong).
Elsewhere the harness reports NEEDS_DEVICE with why (harness/run.py): nothing of the candidate's
runs, and a runner charges no iteration for it.
"""

from __future__ import annotations

import re
from typing import Sequence

NOT_HERE = "not run on this device: "  # how the harness's NEEDS_DEVICE for such a GPU begins
_SPELLING = re.compile(r"(sm_(?P<capability>[0-9]{2,3})(?P<specific>a?)|gfx(?P<line>[0-9]{1,2})[0-9a-f]{2})")


def arch_error(arch: str) -> str:
    """Why `arch` is not an architecture's spelling ("" when it is)."""
    if _SPELLING.fullmatch(arch):
        return ""
    return (
        f"{arch!r} is neither an NVIDIA architecture (sm_90, sm_90a, sm_100) nor an AMD one (gfx942, gfx90a, gfx1100)"
    )


def refusal(archs: Sequence[str], device_arch: str) -> str:
    """Why a device of architecture `device_arch` (harness.device.device_arch: "" for a CPU) may not
    run a task declared for `archs`; "" when it may (a CPU always: it checks through Triton's
    interpreter, or compiles HIP only)."""
    device = _SPELLING.fullmatch(device_arch)
    if device is None:
        return ""
    declared = [match for match in map(_SPELLING.fullmatch, archs) if match is not None]
    why = _nvidia(declared, device) if device["capability"] is not None else _amd(declared, device)
    return f"the task is declared for {', '.join(archs)}{why}; this GPU is {device_arch}" if why else ""


def _nvidia(declared: list[re.Match[str]], device: re.Match[str]) -> str:
    nvidia = [match for match in declared if match["capability"] is not None]
    if not nvidia:
        return ", no NVIDIA GPU"
    capability = int(device["capability"])
    floors = [int(match["capability"]) for match in nvidia if not match["specific"]]
    exact = {int(match["capability"]) for match in nvidia if match["specific"]}
    if capability in exact or (floors and capability >= min(floors)):
        return ""
    later = [f"sm_{min(floors)} or later"] if floors else []
    return ": " + " or ".join(later + [f"sm_{c} alone" for c in sorted(exact)]) + " on NVIDIA"


def _amd(declared: list[re.Match[str]], device: re.Match[str]) -> str:
    lines = {match["line"] for match in declared if match["line"] is not None}
    if not lines:
        return ", no AMD GPU"
    if device["line"] in lines:
        return ""
    return f": the {', '.join(f'gfx{line}' for line in sorted(lines))} line on AMD"
