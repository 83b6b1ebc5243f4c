"""The Environment: where a measurement is made (backend, GPU, driver, versions, image), and its
fingerprint, which keys the score cache.

What varies run to run is recorded beside it and left out of the fingerprint: clocks, and the
measurement (the flush size, the empty event pair taken off every call).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Mapping


@dataclass(frozen=True)
class Environment:
    """Where the evaluation ran; `fingerprint` (sha256 of the parent's probe) is part of the cache key."""

    fingerprint: str = ""
    backend: str = ""  # cuda | rocm | cpu-interpreter
    gpu_name: str = ""
    gpu_arch: str = ""
    driver: str = ""
    image_digest: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)  # torch, triton, python, nvcc, ...
    clocks: Mapping[str, str] = field(default_factory=dict)  # sampled clocks, temperature, power
    measurement: Mapping[str, str] = field(default_factory=dict)  # flush_bytes, event_overhead_us


def fingerprint_environment(environment: Environment) -> str:
    """sha256 over every field but the fingerprint itself, the clocks and the measurement (they vary
    run to run)."""
    fields = {
        "backend": environment.backend,
        "gpu_name": environment.gpu_name,
        "gpu_arch": environment.gpu_arch,
        "driver": environment.driver,
        "image_digest": environment.image_digest,
        "versions": dict(sorted(environment.versions.items())),
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def with_environment(base: Environment, versions: Mapping[str, str], **fields: str) -> Environment:
    """`base` with `fields` replaced and `versions` as its versions, fingerprinted again."""
    environment = replace(base, versions=dict(versions), **fields)
    return replace(environment, fingerprint=fingerprint_environment(environment))


def has_gpu(environment: Environment) -> bool:
    return environment.backend in ("cuda", "rocm")
