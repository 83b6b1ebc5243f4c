"""A real BuildGrid server (CAS, ByteStream, action cache; instance `arena`) on 127.0.0.1, for the
tests of the REAPI score cache and the remote executor."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

CONFIG = """
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def buildgrid_server(folder: Path) -> Iterator[str]:
    """Start the server with its config and log in `folder`; yields host:port once it answers."""
    import grpc

    port = free_port()
    (folder / "bgd.yml").write_text(CONFIG.format(port=port))
    with (folder / "bgd.log").open("wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from buildgrid.server.app import cli; cli()",
                "server",
                "start",
                str(folder / "bgd.yml"),
            ],
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
