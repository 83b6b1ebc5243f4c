"""The candidate digest: a hash of its files (paths and bytes), the candidate's identity in caches."""

from __future__ import annotations

import hashlib

from arena.candidate.candidate import Candidate

# Bump when the encoding below changes, so old digests can never collide with new ones.
_VERSION = b"arena-candidate-v1\0"


def candidate_digest(candidate: Candidate) -> str:
    """Hex sha256 over every (path, bytes) pair in path order; the task address is not included."""
    digest = hashlib.sha256(_VERSION)
    for name in sorted(candidate.files):
        path = name.encode("utf-8")
        content = candidate.files[name]
        # Length prefixes keep ("a", b"bc") and ("ab", b"c") apart.
        digest.update(b"%d:%s%d:" % (len(path), path, len(content)))
        digest.update(content)
    return digest.hexdigest()
