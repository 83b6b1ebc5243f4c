"""Where arena keeps what it writes, by default outside any checkout (the XDG base directories):

    $XDG_STATE_HOME/arena (default ~/.local/state/arena)
        runner/        `arena serve`'s default --state, and the state of a runner started inside
                       a command (`arena agent run`, a Client with no runner address)
        workspaces/    `arena agent run`'s workspaces, private HOMEs and agents' stderr
    $XDG_CACHE_HOME/arena (default ~/.cache/arena)
        scores.sqlite  the score cache (ARENA_CACHE_DIR names another folder for it)

Nothing here lies in the repository, so an agent sandboxed away from the repository
(arena.agents.sandbox) is away from the runner's state, the score cache and other workspaces
too, and the repository's tools (Pants) never watch them. Explicit flags (--state, --out,
--runner-state) still put each anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_VARIABLE = "ARENA_CACHE_DIR"  # the score cache's folder, instead of cache_root()
STATE_VARIABLE, CACHE_VARIABLE = "XDG_STATE_HOME", "XDG_CACHE_HOME"
APP = "arena"


def _base(variable: str, default: Path) -> Path:
    """The XDG base folder `variable` names; its default when unset or relative (the spec ignores those)."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else default


def state_root() -> Path:
    return _base(STATE_VARIABLE, Path.home() / ".local" / "state") / APP


def cache_root() -> Path:
    return _base(CACHE_VARIABLE, Path.home() / ".cache") / APP


def runner_state() -> Path:
    """`arena serve`'s default --state, and an embedded runner's."""
    return state_root() / "runner"


def agent_workspaces() -> Path:
    """Where `arena agent run` lays out its workspaces (one folder per configuration and run)."""
    return state_root() / "workspaces"


def score_cache_folder() -> Path:
    """The score cache's folder: $ARENA_CACHE_DIR, else cache_root()."""
    configured = os.environ.get(CACHE_DIR_VARIABLE, "")
    return Path(configured) if configured else cache_root()
