"""The child's side of the trusted kernel layer (kernel_cache.py): Triton's cache manager in
every harness child (TRITON_CACHE_MANAGER), reading the run's own cache first, then the layer."""

from __future__ import annotations

import json
import os
from pathlib import Path

from triton.runtime.cache import FileCacheManager

from arena.harness.kernel_cache import TRUSTED_VARIABLE


class LayeredCache(FileCacheManager):
    """The run's own cache first, then the trusted layer; writes go to the run's own."""

    def __init__(self, key: str, override: bool = False, dump: bool = False) -> None:
        super().__init__(key, override, dump)
        root = os.environ.get(TRUSTED_VARIABLE, "")
        self._trusted = os.path.join(root, key) if root and not (override or dump) else ""

    def _from_trusted(self, filename: str) -> str | None:
        path = os.path.join(self._trusted, filename) if self._trusted else ""
        return path if path and os.path.isfile(path) else None

    def get_file(self, filename: str) -> str | None:
        return super().get_file(filename) or self._from_trusted(filename)

    def get_group(self, filename: str) -> dict[str, str] | None:
        own = super().get_group(filename)
        if own is not None:
            return own
        group = self._from_trusted(f"__grp__{filename}")
        if group is None:
            return None
        try:
            children = json.loads(Path(group).read_text())["child_paths"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        # The group names its files where they were written (the no-op run's folder): find them here.
        found = {name: self._from_trusted(os.path.basename(str(path))) for name, path in children.items()}
        return {name: path for name, path in found.items() if path is not None}
