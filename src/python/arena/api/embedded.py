"""A runner inside the client's process, for when no runner address is configured.

It serves on 127.0.0.1 (a port the OS picks) with a fresh operator token only this process knows.
State lives in `arena serve`'s default folder ($XDG_STATE_HOME/arena/runner, outside the
repository: arena.runner.folders); when another runner holds it, in a private folder beside it,
removed on stop. The score cache ($ARENA_CACHE_DIR, else $XDG_CACHE_HOME/arena: scores.sqlite)
is shared either way.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import grpc

from arena.api.server import STOP_GRACE_S, create_server
from arena.errors import StateBusy
from arena.runner.auth import Identity, Tokens, new_token
from arena.runner.folders import runner_state, score_cache_folder
from arena.runner.run_folders import sweep_run_folders
from arena.runner.runner import Runner, open_runner

LOCAL_AGENT = "local"


@dataclass
class EmbeddedRunner:
    runner: Runner
    server: grpc.Server
    address: str
    token: str
    private_state: Path | None = None  # removed on stop

    def stop(self) -> None:
        self.server.stop(STOP_GRACE_S).wait(STOP_GRACE_S)
        self.runner.stop()
        if self.private_state is not None:
            shutil.rmtree(self.private_state, ignore_errors=True)


def start_embedded_runner(
    repo_root: Path, runner: Runner | None = None, agents: Mapping[str, Identity] | None = None
) -> EmbeddedRunner:
    """Start `runner` (default: the real pipeline on this machine) behind a loopback server.
    `agents`: more tokens it knows (token -> identity), e.g. the agent `arena agent run` starts."""
    private_state = None
    if runner is None:
        sweep_run_folders()  # what killed runs left behind, once per process that starts a runner
        state = runner_state()
        store_path = score_cache_folder() / "scores.sqlite"
        try:
            runner = open_runner(repo_root, state, store_path=store_path)
        except StateBusy:
            state.parent.mkdir(parents=True, exist_ok=True)
            private_state = Path(tempfile.mkdtemp(prefix="runner-", dir=state.parent))
            runner = open_runner(repo_root, private_state, store_path=store_path)
    token = new_token()
    known = Tokens({token: Identity(LOCAL_AGENT, operator=True), **(agents or {})})
    server, port = create_server("127.0.0.1:0", runner, known)
    server.start()
    return EmbeddedRunner(runner, server, f"127.0.0.1:{port}", token, private_state)
