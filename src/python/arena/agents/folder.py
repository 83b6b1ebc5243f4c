"""The workspace's candidate/ folder as files, for the agents that run in this repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Mapping

from arena.candidate.candidate import Candidate

CANDIDATE_FOLDER = "candidate"  # arena.runner.workspace writes the editable files here


def read_folder(folder: Path) -> dict[str, bytes]:
    """Every regular file under `folder`, by POSIX path relative to it (links are not followed)."""
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def write_folder(folder: Path, files: Mapping[str, bytes]) -> None:
    """Make `folder` hold exactly `files` (what was there before is removed)."""
    if folder.exists():
        shutil.rmtree(folder)
    for path, content in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def workspace_candidate(workspace: Path, task: str) -> Candidate:
    """The candidate the workspace holds now: the files of its candidate/ folder."""
    return Candidate(task=task, files=read_folder(workspace / CANDIDATE_FOLDER))
