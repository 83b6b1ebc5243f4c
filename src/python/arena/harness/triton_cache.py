"""The child's side of the trusted kernel layer (kernel_cache.py): Triton's cache manager in
every harness process (TRITON_CACHE_MANAGER): of the run's own cache, only what this process
wrote there and left as it was; then the layer.

The run's own cache is a folder of the job's, which the candidate's worker can write: a candidate
that planted a compiled kernel under the key of the baseline's (it can compute the key by
compiling the baseline's source itself), or changed one the judge wrote, would have the judge
load it as the baseline (slower, or running the candidate's code in the judge's GPU context).
So each process keeps the digest of every file it put, and reads back only those whose bytes
still match; anything else is a miss, compiled again. The judge freezes the candidate's
processes while it compiles after candidate code has run (Lent.warm_up), so nothing can change a
file between its check here and Triton's read."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import ClassVar

from triton.runtime.cache import FileCacheManager

from arena.harness.kernel_cache import TRUSTED_VARIABLE


class LayeredCache(FileCacheManager):
    """This process's own entries of the run's cache, checked, then the trusted layer; writes go to
    the run's own."""

    # path -> sha256 of the bytes this process put there (one record for every instance)
    _written: ClassVar[dict[str, str]] = {}

    def __init__(self, key: str, override: bool = False, dump: bool = False) -> None:
        super().__init__(key, override, dump)
        root = os.environ.get(TRUSTED_VARIABLE, "")
        self._trusted = os.path.join(root, key) if root and not (override or dump) else ""
        self._checked = not (override or dump)  # Triton's override and dump folders: as Triton reads them

    def put(self, data: bytes | str, filename: str, binary: bool = True) -> str:
        path = super().put(data, filename, binary)
        raw = data if isinstance(data, bytes) else str(data).encode()
        LayeredCache._written[path] = hashlib.sha256(raw).hexdigest()
        return path

    def _own(self, path: str) -> bool:
        """Whether this process put `path` and its bytes are still what it put."""
        want = LayeredCache._written.get(path)
        if want is None:
            return False
        try:
            return hashlib.sha256(Path(path).read_bytes()).hexdigest() == want
        except OSError:
            return False

    def _from_trusted(self, filename: str) -> str | None:
        path = os.path.join(self._trusted, filename) if self._trusted else ""
        return path if path and os.path.isfile(path) else None

    def has_file(self, filename: str) -> bool:
        return super().has_file(filename) if not self._checked else self.get_file(filename) is not None

    def get_file(self, filename: str) -> str | None:
        if not self._checked:
            return super().get_file(filename)
        path = self._make_path(filename)
        return path if self._own(path) else self._from_trusted(filename)

    def get_group(self, filename: str) -> dict[str, str] | None:
        if not self._checked:
            return super().get_group(filename)
        own = self._make_path(f"__grp__{filename}")
        if self._own(own):
            children = _children(own)
            if children is not None and all(self._own(path) for path in children.values()):
                return children
        return self._trusted_group(filename)

    def _trusted_group(self, filename: str) -> dict[str, str] | None:
        group = self._from_trusted(f"__grp__{filename}")
        if group is None:
            return None
        children = _children(group)
        if children is None:
            return None
        # The group names its files where they were written (the no-op run's folder): find them here.
        found = {name: self._from_trusted(os.path.basename(path)) for name, path in children.items()}
        return {name: path for name, path in found.items() if path is not None}


def _children(group: str) -> dict[str, str] | None:
    """A group file's members, name -> path (None where it cannot be read as one)."""
    try:
        children = json.loads(Path(group).read_text())["child_paths"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(children, dict):
        return None
    return {str(name): str(path) for name, path in children.items()}
