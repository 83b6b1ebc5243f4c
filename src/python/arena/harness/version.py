"""Which code made a result: digests of the arena's own sources, computed from the files.

`harness_version` is recorded with every evaluation. `trusted_digest` covers what the harness
child imports as trusted code. A process pins it when it starts (the CLI, a runner) and checks it
before every job: sources edited after the start (by a candidate's leftover process, say) stop
every later job with SourcesChanged instead of measuring with edited code. A parent also compares
it before and after each run, so a candidate that edits them mid-run is caught. Nothing here is
bumped by hand.
"""

from __future__ import annotations

import hashlib
import threading
from functools import lru_cache
from pathlib import Path

from arena.errors import ArenaError

ARENA_ROOT = Path(__file__).resolve().parent.parent  # the arena package folder
TRUSTED_PACKAGES = ("harness", "task", "candidate", "limits")  # sources that must not change during a run


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


class SourcesChanged(ArenaError):
    """The trusted sources on disk are not the ones this process started with; restart it."""


_pinned: list[str] = []
_pin_lock = threading.Lock()


def pin_sources() -> str:
    """Pin the trusted sources' digest as they are now, once per process; returns the pinned one."""
    with _pin_lock:
        if not _pinned:
            _pinned.append(trusted_digest())
        return _pinned[0]


def check_sources() -> None:
    """Raise SourcesChanged unless the trusted sources are still the pinned ones (pinning them
    now if nothing pinned them yet)."""
    pinned = pin_sources()
    now = trusted_digest()
    if now != pinned:
        raise SourcesChanged(
            f"the harness's trusted sources changed on disk since this process started "
            f"(digest {pinned[:12]} then, {now[:12]} now); no job runs until it is restarted"
        )
