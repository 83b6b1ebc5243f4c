"""An evaluation's identity: the key the score cache stores it under, a hash of everything that
can change a stored score.

The task digest, the candidate digest, the environment fingerprint, the settings, and the code
that measures and scores: the harness, the executors, the task and candidate rules, scoring and
statistics, and this package. A change to any of them changes the key, so exactly the affected
scores are recomputed; nothing is invalidated by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena.harness.version import ARENA_ROOT, packages_digest

# The packages whose code decides a score (everything the cache key must cover besides data).
SCORING_CODE = ("task", "candidate", "environment", "harness", "executors", "scoring", "evaluation")


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
    code_version: str,
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
        "code_version": code_version,
        "settings": measured,
    }
    return hashlib.sha256(canonical_json(document).encode()).hexdigest()


@lru_cache(maxsize=1)
def code_version(root: Path = ARENA_ROOT) -> str:
    """The digest of the scoring code (SCORING_CODE) under `root` as this process first read it."""
    return packages_digest(SCORING_CODE, root)
