"""The score cache's key: a hash of everything that produced an evaluation.

A changed task, candidate, machine, harness or setting changes the key, so exactly the affected
scores are recomputed; nothing is invalidated by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import arena.harness


def _canonical(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, dataclasses as dicts, tuples as lists: one text per value."""
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


# Settings that say where a job ran, not what was measured: which GPU of a machine took the job
# (the environment fingerprint already names the machine and its GPU model).
PLACEMENT_SETTINGS = ("device",)


def cache_key(
    task_digest: str,
    candidate_digest: str,
    environment_fingerprint: str,
    harness_version: str,
    settings: Any,
    task: str = "",
) -> str:
    """Hex sha256 over the canonical JSON of the inputs (settings: a dataclass or a dict).

    `task` is the task's address: two tasks declared alike share a digest but not their scores.
    """
    measured = _canonical(settings)
    if isinstance(measured, dict):
        measured = {k: v for k, v in measured.items() if k not in PLACEMENT_SETTINGS}
    document = {
        "task": task,
        "task_digest": task_digest,
        "candidate_digest": candidate_digest,
        "environment": environment_fingerprint,
        "harness_version": harness_version,
        "settings": measured,
    }
    return hashlib.sha256(canonical_json(document).encode()).hexdigest()


def digest_tree(root: Path) -> str:
    """sha256 over every file below `root` (sorted relative path and bytes), caches excluded."""
    digest = hashlib.sha256()
    files = sorted(
        path for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )
    for path in files:
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


@lru_cache(maxsize=1)
def harness_version() -> str:
    """The digest of the harness sources, computed from the package directory, never bumped by hand."""
    return digest_tree(Path(arena.harness.__file__).parent)
