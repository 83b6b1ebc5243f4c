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
VISIBLE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
PCI_DEVICES = Path("/sys/bus/pci/devices")


def discover_lanes(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """Lane names: GPU indices as the harness's `device` setting takes them, or ("cpu",)."""
    given = environ.get("ARENA_DEVICES", "").strip()
    if given:
        return parse_lanes(given)
    for variable in VISIBLE_VARIABLES:
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
    """Each GPU lane's own CPUs (arena/limits/cpus.py), where there are two GPU lanes or more: the
    CPUs near each GPU (its PCI device's local CPUs, shared evenly by the lanes near the same
    ones), or where those cannot be known this process's CPUs in even contiguous shares in lane
    order; unless ARENA_LANE_CPUS says otherwise ("off": none kept; "0:0-47;1:48-95": each GPU's).
    With one lane, nothing."""
    gpus = [int(lane) for lane in lanes if lane != CPU_LANE]
    given = environ.get(CPUS_VARIABLE, "").strip().lower()
    if given == "off" or (given in ("", "auto") and len(gpus) < 2):
        return {}
    if given in ("", "auto"):
        mine = frozenset(os.sched_getaffinity(0))
        return near_shares(gpus, near_cpus(gpus, environ), mine) or dict(zip(gpus, split(mine, len(gpus))))
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


def near_shares(gpus: list[int], near: Mapping[int, frozenset[int]], mine: frozenset[int]) -> dict[int, frozenset[int]]:
    """Each GPU's share of the CPUs near it that this process may use, the GPUs near the same CPUs
    sharing them evenly in lane order; {} when one GPU's are unknown, none of ours, or overlap
    another set without being the same (then the contiguous split is used)."""
    groups: dict[frozenset[int], list[int]] = {}
    for gpu in gpus:
        local = near.get(gpu, frozenset()) & mine
        if not local:
            return {}
        groups.setdefault(local, []).append(gpu)
    sets = list(groups)
    if any(a & b for index, a in enumerate(sets) for b in sets[index + 1 :]):
        return {}
    shares: dict[int, frozenset[int]] = {}
    for local, members in groups.items():
        shares.update(zip(members, split(local, len(members))))
    return shares


def near_cpus(gpus: list[int], environ: Mapping[str, str] = os.environ) -> dict[int, frozenset[int]]:
    """The CPUs near each GPU (its PCI device's local_cpulist), by the runtime's GPU index; {} where
    the runtime's numbering cannot be matched to PCI addresses: a visible-devices variable
    renumbers them, or NVIDIA GPUs of several models (CUDA puts the fastest first, not PCI order,
    unless CUDA_DEVICE_ORDER=PCI_BUS_ID)."""
    if any(environ.get(variable, "").strip() for variable in VISIBLE_VARIABLES):
        return {}
    addresses = nvidia_pci_addresses(environ) or rocm_pci_addresses()
    near: dict[int, frozenset[int]] = {}
    for gpu in gpus:
        if gpu >= len(addresses):
            return {}
        try:
            near[gpu] = parsed((PCI_DEVICES / addresses[gpu] / "local_cpulist").read_text())
        except (OSError, ValueError):
            return {}
    return near


def nvidia_pci_addresses(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Each NVIDIA GPU's PCI address as sysfs names it ("0000:18:00.0"), in CUDA's order where it
    is PCI order; [] otherwise, or without nvidia-smi."""
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,pci.bus_id", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [[field.strip() for field in line.split(",")] for line in listing.stdout.splitlines() if line.strip()]
    if any(len(row) != 2 for row in rows):
        return []
    one_model = len({name for name, _ in rows}) == 1
    if not one_model and environ.get("CUDA_DEVICE_ORDER", "") != "PCI_BUS_ID":
        return []
    return [_sysfs_address(bus) for _, bus in sorted(rows, key=lambda row: row[1].lower())]


def rocm_pci_addresses() -> list[str]:
    """Each AMD GPU's PCI address, in the topology's node order (the order ROCm numbers them)."""
    addresses = []
    for node in sorted(KFD_NODES.glob("*"), key=lambda path: int(path.name) if path.name.isdigit() else -1):
        try:
            fields = dict(line.split(" ", 1) for line in (node / "properties").read_text().splitlines() if " " in line)
        except OSError:
            continue
        if int(fields.get("simd_count", "0")) <= 0:
            continue  # a CPU node
        location, domain = int(fields.get("location_id", "0")), int(fields.get("domain", "0"))
        addresses.append(f"{domain:04x}:{location >> 8:02x}:{(location >> 3) & 0x1F:02x}.{location & 7}")
    return addresses


def _sysfs_address(bus_id: str) -> str:
    """nvidia-smi's "00000000:18:00.0" -> sysfs's "0000:18:00.0"."""
    domain, _, rest = bus_id.lower().partition(":")
    return f"{domain[-4:]}:{rest}"
