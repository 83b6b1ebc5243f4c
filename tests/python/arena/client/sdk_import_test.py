"""The client SDK loads no server code: an agent's process imports the SDK, not the runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Modules that only a runner (or the machinery behind it) needs.
SERVER = (
    "arena.runner.runner",
    "arena.runner.queue",
    "arena.runner.database",
    "arena.runner.attempts",
    "arena.api.service",
    "arena.api.server",
    "arena.api.embedded",
    "arena.evaluation.evaluate",
    "arena.cache",
    "arena.executors",
    "arena.harness.launch",
    "torch",
)


def _modules_after(statement: str) -> list[str]:
    """sys.modules of a fresh interpreter after `statement`."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def _server_modules(loaded: list[str]) -> list[str]:
    return [m for m in loaded if any(m == s or m.startswith(s + ".") for s in SERVER)]


def test_importing_the_sdk_loads_no_server_code() -> None:
    loaded = _modules_after("from arena.client.client import Client")
    assert "arena.client.client" in loaded and "arena.v1.runner_pb2_grpc" in loaded
    assert _server_modules(loaded) == []


def test_the_check_would_see_server_code() -> None:
    # The embedded runner is server code by design: loading it must show up.
    assert "arena.runner.runner" in _server_modules(_modules_after("import arena.api.embedded"))
