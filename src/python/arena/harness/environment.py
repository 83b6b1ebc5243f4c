"""What the child runs on: backend, GPU, driver, versions; recorded with every result."""

from __future__ import annotations

import platform
import shutil
import subprocess

from arena.harness.device import Device, device_arch, device_name, read_clock_sample, start_clock_sample

# Nominal peaks for the speed-of-light floor: HBM bandwidth (GB/s) and dense bf16 TFLOP/s.
_PEAKS = {
    "H200": (4800.0, 989.0),
    "H100": (3350.0, 989.0),
    "MI300X": (5300.0, 1307.0),
    "MI355X": (8000.0, 2500.0),
}


def probe_environment(
    device: Device | None = None, clocks: dict[str, object] | None = None, nvcc: bool = True
) -> dict[str, object]:
    """Backend, GPU name and arch, driver, tool versions, clocks (sampled now unless given);
    GPU fields stay empty on cpu. `nvcc=False` skips asking nvcc its version (HIP tasks only)."""
    import torch
    import triton

    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": str(torch.version.cuda or ""),
        "hip": str(torch.version.hip or ""),
        "nvcc": _nvcc_version() if nvcc else "",
    }
    env: dict[str, object] = {
        "backend": "cpu",
        "gpu_name": "",
        "gpu_arch": "",
        "driver": "",
        "versions": versions,
        "clocks": {},
        "peak_bandwidth_gbs": 0.0,
        "peak_tflops": 0.0,
    }
    if device is None or device.backend == "cpu":
        return env
    clocks = dict(clocks) if clocks is not None else read_clock_sample(start_clock_sample(device))
    name = device_name(device)
    peak = next((v for k, v in _PEAKS.items() if k in name), (0.0, 0.0))
    env.update(
        backend=device.backend,
        gpu_name=name,
        gpu_arch=device_arch(device),
        driver=str(clocks.pop("driver_version", "")),
        clocks=clocks,
        peak_bandwidth_gbs=peak[0],
        peak_tflops=peak[1],
    )
    return env


def _nvcc_version() -> str:
    if shutil.which("nvcc") is None:
        return ""
    try:
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().splitlines()[-1] if out.strip() else ""
