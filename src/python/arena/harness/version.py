"""Which code made a result: digests of the arena's own sources, computed from the files.

`harness_version` is recorded with every evaluation. `trusted_digest` covers what the harness
child imports as trusted code; a parent compares it before and after a run, so a candidate that
edits those sources is caught. Nothing here is bumped by hand.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

ARENA_ROOT = Path(__file__).resolve().parent.parent  # the arena package folder
TRUSTED_PACKAGES = ("harness", "task", "candidate")  # sources that must not change during a run


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


def packages_digest(packages: tuple[str, ...], root: Path = ARENA_ROOT) -> str:
    """One digest over the named packages' files under `root` (the arena package), each by name."""
    digest = hashlib.sha256()
    for package in packages:
        digest.update(b"%s:%s\n" % (package.encode(), digest_tree(root / package).encode()))
    return digest.hexdigest()


@lru_cache(maxsize=1)
def harness_version() -> str:
    """The digest of the harness sources as this process first found them."""
    return digest_tree(ARENA_ROOT / "harness")


def trusted_digest() -> str:
    """The digest of the trusted packages' sources as they are on disk now (never cached)."""
    return packages_digest(TRUSTED_PACKAGES)
