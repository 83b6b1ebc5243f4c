"""Which device lanes this runner has: one worker (one timing job at a time) per GPU.

Discovered without importing torch (only the harness imports GPU libraries): the ARENA_DEVICES
variable if set ("0,1" or "cpu"); else the visible-device variables; else nvidia-smi; else the
ROCm kernel driver's topology; else one "cpu" lane (Triton's interpreter checks correctness there).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from arena.harness.settings import HarnessSettings
from arena.limits.cpus import parsed, split

CPU_LANE = "cpu"
KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
CPUS_VARIABLE = "ARENA_LANE_CPUS"  # "auto" (default), "off", or "GPU:CPUS;..." e.g. "0:0-47;1:48-95"


def discover_lanes(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """Lane names: GPU indices as the harness's `device` setting takes them, or ("cpu",)."""
    given = environ.get("ARENA_DEVICES", "").strip()
    if given:
        return parse_lanes(given)
    for variable in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        visible = [item for item in environ.get(variable, "").split(",") if item.strip()]
        if visible:
            return tuple(str(index) for index in range(len(visible)))
    count = count_nvidia_gpus() or count_rocm_gpus()
    return tuple(str(index) for index in range(count)) if count else (CPU_LANE,)


def parse_lanes(text: str) -> tuple[str, ...]:
    """ "0,1" -> ("0", "1"); "cpu" -> ("cpu",); anything else is an error."""
    lanes = tuple(item.strip() for item in text.split(",") if item.strip())
    for lane in lanes:
        if lane != CPU_LANE and not lane.isdigit():
            raise ValueError(f"device lane {lane!r} is neither a GPU index nor {CPU_LANE!r}")
    if not lanes or len(set(lanes)) != len(lanes):
        raise ValueError(f"device lanes {text!r} must be distinct and not empty")
    return lanes


def lane_settings(settings: HarnessSettings, lane: str) -> HarnessSettings:
    """The settings a job runs with on `lane`: a GPU lane pins the job to its GPU; the CPU lane
    names the cpu backend, never "auto". The harness caps a child's address space only when its
    backend setting is "cpu" (CUDA and ROCm reserve far more than they use), and "auto" would
    also let a CPU lane's job onto a GPU that other lanes time on."""
    if lane == CPU_LANE:
        if settings.backend not in ("auto", CPU_LANE):
            raise ValueError(f"backend {settings.backend!r} needs a GPU lane; lane {lane!r} has none")
        return replace(settings, backend=CPU_LANE)
    if not lane.isdigit():
        raise ValueError(f"device lane {lane!r} is neither a GPU index nor {CPU_LANE!r}")
    return replace(settings, device=int(lane))


def count_nvidia_gpus() -> int:
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def count_rocm_gpus() -> int:
    """GPU nodes in the amdgpu topology: the ones with SIMD units (CPU nodes have none)."""
    count = 0
    for properties in sorted(KFD_NODES.glob("*/properties")) if KFD_NODES.is_dir() else ():
        for line in properties.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "simd_count" and value.strip().isdigit() and int(value) > 0:
                count += 1
    return count


def lane_cpus(lanes: tuple[str, ...], environ: Mapping[str, str] = os.environ) -> dict[int, frozenset[int]]:
    """Each GPU lane's own CPUs (arena/limits/cpus.py), where there are two GPU lanes or more: this
    process's CPUs in even contiguous shares, in lane order, unless ARENA_LANE_CPUS says otherwise
    ("off": none kept; "0:0-47;1:48-95": each GPU's, say those near it). With one lane, nothing."""
    gpus = [int(lane) for lane in lanes if lane != CPU_LANE]
    given = environ.get(CPUS_VARIABLE, "").strip().lower()
    if given == "off" or (given in ("", "auto") and len(gpus) < 2):
        return {}
    if given in ("", "auto"):
        return dict(zip(gpus, split(os.sched_getaffinity(0), len(gpus))))
    chosen: dict[int, frozenset[int]] = {}
    for item in given.split(";"):
        gpu, _, cpus = item.partition(":")
        try:
            chosen[int(gpu)] = parsed(cpus)
        except ValueError:
            chosen.clear()
            break
        if not chosen[int(gpu)]:
            chosen.clear()
            break
    if not chosen or set(chosen) != set(gpus):
        raise ValueError(f"{CPUS_VARIABLE}={given!r}: expected auto, off or GPU:CPUS;... naming each lane's GPU {gpus}")
    return chosen
