"""The real agent CLIs for tests, installed from npm at pinned versions into a cache shared by
runs (~/.cache/arena-agents/npm/<versions>), and a plain way to run one through its adapter, in
the sandbox `arena agent run` gives it (arena.agents.sandbox)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import pytest

from arena.agents.adapter import Adapter, AgentRun
from arena.agents.sandbox import agent_sandbox, proxied

CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.332"
CODEX = "@openai/codex@0.171.0"
PACKAGES = (CLAUDE_CODE, CODEX)
INSTALL_TIMEOUT_S = 600
AGENT_TIMEOUT_S = 300
# Read when the tests are collected, before a fixture points XDG_CACHE_HOME at a test's tmp_path
# (arena_testing.xdg): the CLIs are installed once for every run.
HOME = Path.home()  # from the password database where the test runner left HOME out
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or HOME / ".cache")


def install_clis() -> Path:
    """The bin folder holding `claude` and `codex`; skips the test when npm is absent."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the Claude Code and Codex CLIs come from npm (.ci/run installs it)")
    key = "_".join(package.replace("@", "").replace("/", "-") for package in PACKAGES)
    prefix = CACHE / "arena-agents" / "npm" / key
    bin_dir = prefix / "node_modules" / ".bin"
    if not all((bin_dir / name).exists() for name in ("claude", "codex")):
        prefix.mkdir(parents=True, exist_ok=True)
        # A project folder rather than --prefix, which also moves npm's global config to
        # PREFIX/etc/npmrc: the machine's own (its cafile, registry, proxy) would go unread. Seen:
        # SELF_SIGNED_CERT_IN_CHAIN behind a proxy whose CA only the global config named.
        manifest = prefix / "package.json"
        if not manifest.exists():
            manifest.write_text('{"private": true}\n')
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", *PACKAGES], cwd=prefix,
            env={**os.environ, "HOME": str(HOME)},  # npm's cache and its .npmrc; without HOME it hangs
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
        )  # fmt: skip
        assert done.returncode == 0, f"npm install failed:\n{done.stdout}\n{done.stderr}"
    return bin_dir


def mcp_command() -> tuple[str, ...]:
    """`arena mcp`, run by the interpreter running the tests."""
    return (sys.executable, "-m", "arena.cli.main", "mcp")


def mcp_environment(runner: str, token: str, attempt: str, workspace: Path) -> dict[str, str]:
    return {
        "ARENA_RUNNER": runner,
        "ARENA_TOKEN": token,
        "ARENA_ATTEMPT": attempt,
        "ARENA_WORKSPACE": str(workspace),
        # The server imports arena the way this test did (absolute: it starts in the workspace).
        "PYTHONPATH": os.pathsep.join(os.path.abspath(path) for path in sys.path if path),
    }


def run_agent(adapter: Adapter, run: AgentRun, hidden: Iterable[Path] = ()) -> subprocess.CompletedProcess[bytes]:
    """Start the agent as its adapter says (config files written into its HOME first) in its
    workspace, in its sandbox (where this machine offers one; `hidden`: folders no folder it is
    shown may hold), wait for it, and return its exit status and output."""
    launch = adapter.launch(run)
    for path, content in launch.files.items():
        target = run.home / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    sandbox = agent_sandbox((*hidden, Path.cwd(), HOME))
    egress = None if sandbox is None else sandbox.egress(run.mcp_env.get("ARENA_RUNNER", ""), run.endpoint)
    env = (
        dict(launch.env) if egress is None else proxied(launch.env, egress)
    )  # out through the proxy, as arena agent run
    held = None if sandbox is None else sandbox.lease()  # its user, under a root runner
    try:
        user = None if held is None else held.user
        argv = launch.argv if sandbox is None else sandbox.wrap(launch, run.workspace, run.home, egress, user)
        return subprocess.run(
            list(argv), cwd=run.workspace, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, timeout=AGENT_TIMEOUT_S,
        )  # fmt: skip
    finally:
        if held is not None:
            held.release()
        if egress is not None:
            egress.close()
