"""Candidates kept by content beside the score cache, so a stored evaluation can be re-run.

An Evaluation records only its candidate's digest; `arena reproduce` needs the files back. Each
file is stored once under its sha256 (files/<hash>), each candidate as a manifest of paths to
hashes under its candidate digest (candidates/<digest>.json). Reads check every hash again, so
a damaged store answers "missing", never a different candidate.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from arena.candidate.candidate import Candidate

FOLDER_NAME = "blobs"  # beside scores.sqlite


class CandidateStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def put(self, candidate: Candidate) -> str:
        """Keep `candidate`'s files (once each); returns its candidate digest."""
        digest = candidate.digest
        manifest = self.root / "candidates" / f"{digest}.json"
        if manifest.exists():
            return digest
        hashes = {}
        for name, data in sorted(candidate.files.items()):
            hashes[name] = hashlib.sha256(data).hexdigest()
            target = self.root / "files" / hashes[name]
            if not target.exists():
                _write_atomically(target, data)
        _write_atomically(manifest, json.dumps({"files": hashes}, sort_keys=True).encode())
        return digest

    def get(self, digest: str, task: str) -> Candidate | None:
        """The candidate with `digest` as a candidate for `task`; None if not kept (or damaged)."""
        try:
            manifest = json.loads((self.root / "candidates" / f"{digest}.json").read_text())
            files = {name: (self.root / "files" / sha).read_bytes() for name, sha in manifest["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        candidate = Candidate(task=task, files=files)
        return candidate if candidate.digest == digest else None


def _write_atomically(path: Path, data: bytes) -> None:
    """Readers see the whole file or none (two writers write the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
