"""A one-task repository (y = 2 * x in Triton, checked by the interpreter on CPU) for the executors."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from arena.candidate.candidate import Candidate
from arena.task.load import load_task
from arena.task.task import Task

SCALE_ADDRESS = "tasks/triton2triton/scale:scale"
SCALE_BUILD = """
kernel_task(
    name="scale",
    category="triton2triton",
    description="y = 2 * x",
    baseline=["kernel.py"],
    entry="kernel.py:scale",
    signature="scale(x: [N] float32) -> [N] float32",
    reference="reference.py:scale",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["N"], "dtype": "float32"}],
    outputs=[{"name": "y", "shape": ["N"], "dtype": "float32"}],
    cases=[
        {"name": "small", "dims": {"N": 300}, "dtype": "float32", "seed": 5},
        {"name": "big", "dims": {"N": 1000000}, "dtype": "float32", "seed": 6, "timed": True},
    ],
)
"""
SCALE_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * FACTOR, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), FACTOR=2.0, BLOCK=256)
    return y
"""
WRONG_KERNEL = SCALE_KERNEL.replace("FACTOR=2.0", "FACTOR=3.0")


def write_scale_repo(root: Path) -> Path:
    task_dir = root / "tasks" / "triton2triton" / "scale"
    task_dir.mkdir(parents=True)
    (root / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(SCALE_BUILD)
    (task_dir / "kernel.py").write_text(SCALE_KERNEL)
    (task_dir / "reference.py").write_text("def scale(x):\n    return x * 2\n")
    return root


@pytest.fixture
def scale_repo(tmp_path: Path) -> Path:
    return write_scale_repo(tmp_path / "repo")


@pytest.fixture
def scale_task(scale_repo: Path) -> Task:
    return load_task(scale_repo, SCALE_ADDRESS)


@pytest.fixture
def wrong_candidate() -> Candidate:
    """Triples instead of doubling: compiles, runs, incorrect."""
    return Candidate(SCALE_ADDRESS, {"kernel.py": WRONG_KERNEL.encode()})


# A BuildGrid server (CAS, ByteStream, action cache) for the remote executor's tests; the same
# configuration as tests/python/arena/cache/reapi_store_test.py (conftests cannot be shared).
BUILDGRID_CONFIG = """
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
authorization:
  method: none
storages:
  - !lru-storage &storage
    size: 256MB
caches:
  - !lru-action-cache &cache
    storage: *storage
    max-cached-refs: 1024
    allow-updates: true
    cache-failed-actions: true
instances:
  - name: arena
    services:
      - !action-cache
        cache: *cache
      - !cas
        storage: *storage
      - !bytestream
        storage: *storage
"""


@pytest.fixture
def buildgrid(tmp_path: Path) -> Iterator[str]:
    """host:port of a BuildGrid server on 127.0.0.1 (instance `arena`); skipped without buildgrid."""
    if importlib.util.find_spec("buildgrid") is None:
        pytest.skip("the optional `buildgrid` package (REAPI messages and a server) is not installed")
    import grpc

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    (tmp_path / "bgd.yml").write_text(BUILDGRID_CONFIG.format(port=port))
    log = (tmp_path / "bgd.log").open("wb")
    start = "from buildgrid.server.app import cli; cli()"
    server = subprocess.Popen(
        [sys.executable, "-c", start, "server", "start", str(tmp_path / "bgd.yml")],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    endpoint = f"127.0.0.1:{port}"
    try:
        with grpc.insecure_channel(endpoint) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
        yield endpoint
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
