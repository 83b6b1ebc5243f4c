"""The Candidate: the files an agent returns for a task, restricted to the task's allow-list."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from arena.candidate.allowlist import (
    IGNORED_FOLDERS,
    MAX_FILE_BYTES,
    check_candidate_path,
    check_candidate_sizes,
    check_file_tree,
)
from arena.errors import InvalidCandidate
from arena.task.task import Task

# Bump when the digest's encoding changes, so old digests can never collide with new ones.
_DIGEST_VERSION = b"arena-candidate-v1\0"


@dataclass(frozen=True)
class Candidate:
    """Files by path relative to the task folder; files left out are the baseline's.

    `digest` is its identity in caches and queues: a hash of the files, computed once here.
    """

    task: str  # the task's address
    files: Mapping[str, bytes]
    digest: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", dict(sorted(self.files.items())))
        object.__setattr__(self, "digest", digest_files(self.files))


def digest_files(files: Mapping[str, bytes]) -> str:
    """Hex sha256 over every (path, bytes) pair in path order; the task address is not included."""
    digest = hashlib.sha256(_DIGEST_VERSION)
    for name in sorted(files):
        path = name.encode("utf-8")
        content = files[name]
        # Length prefixes keep ("a", b"bc") and ("ab", b"c") apart.
        digest.update(b"%d:%s%d:" % (len(path), path, len(content)))
        digest.update(content)
    return digest.hexdigest()


def accept_candidate(task: Task, files: Mapping[str, bytes]) -> Candidate:
    """A candidate for `task` from files that arrived as a map (over gRPC, from a queue): the one
    check at that boundary; InvalidCandidate if a path or size breaks the rules, or a path is
    both a file and a folder (check_file_tree)."""
    for name in files:
        check_candidate_path(task, name)
    check_file_tree(task, files)
    check_candidate_sizes(dict(files))
    return Candidate(task=task.address, files=files)


def load_candidate(task: Task, directory: Path) -> Candidate:
    """The candidate in `directory` (laid out like the task folder); InvalidCandidate if it breaks a rule."""
    files = read_folder(directory, lambda relative: check_candidate_path(task, relative))
    check_file_tree(task, files)
    check_candidate_sizes(files)
    return Candidate(task=task.address, files=files)


def read_folder(directory: Path, check_path: Callable[[str], object] = lambda relative: None) -> dict[str, bytes]:
    """Every plain file under `directory` by POSIX path relative to it (caches such as __pycache__
    left out), each path passed to `check_path` before it is read; InvalidCandidate for a missing
    folder, a symlink, anything else that is no plain file, or a file over the size limit."""
    if not directory.is_dir() or directory.is_symlink():
        raise InvalidCandidate(f"candidate folder {directory.name!r} does not exist")
    files: dict[str, bytes] = {}
    for parent, folders, names in os.walk(directory):
        folders[:] = sorted(f for f in folders if f not in IGNORED_FOLDERS)
        for name in folders + sorted(names):
            path = Path(parent) / name
            relative = path.relative_to(directory).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise InvalidCandidate(f"{relative!r} is a symlink; candidates hold plain files only")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise InvalidCandidate(f"{relative!r} is not a plain file")
            check_path(relative)
            if path.stat().st_size > MAX_FILE_BYTES:
                raise InvalidCandidate(f"{relative!r} has {path.stat().st_size} bytes; the limit is {MAX_FILE_BYTES}")
            files[relative] = path.read_bytes()
    return files


def baseline_candidate(task: Task, repo_root: Path) -> Candidate:
    """The task's own editable files, as a candidate (the no-op an agent starts from)."""
    task_dir = repo_root / task.task_dir
    files: dict[str, bytes] = {}
    for entry in task.editable:
        path = task_dir / entry
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and not IGNORED_FOLDERS.intersection(file.relative_to(task_dir).parts):
                    files[file.relative_to(task_dir).as_posix()] = file.read_bytes()
        elif path.is_file():
            files[entry] = path.read_bytes()
    if not files:
        raise InvalidCandidate(f"{task.address} has no editable files in its folder")
    return Candidate(task=task.address, files=files)


def exemplar_candidates(task: Task, repo_root: Path) -> dict[str, Candidate]:
    """The task's known-faster candidates, keyed by folder as declared (e.g. "exemplars/online")."""
    task_dir = repo_root / task.task_dir
    return {folder: load_candidate(task, task_dir / folder) for folder in task.exemplars}


def wrong_candidate(task: Task, repo_root: Path) -> Candidate | None:
    """The task's deliberately wrong candidate, or None when it declares none."""
    if not task.wrong:
        return None
    return load_candidate(task, repo_root / task.task_dir / task.wrong)


def write_candidate(candidate: Candidate, directory: Path) -> None:
    """Write the candidate's files under `directory` (created if missing), laid out like the task folder."""
    for name, content in candidate.files.items():
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or not parts:
            raise InvalidCandidate(f"{name!r} is not a plain relative path")
        path = directory.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def candidate_to_json(candidate: Candidate) -> str:
    """The candidate as one JSON text (files base64), for queues and files."""
    files = {path: base64.b64encode(content).decode("ascii") for path, content in candidate.files.items()}
    return json.dumps({"task": candidate.task, "files": files}, sort_keys=True)


def candidate_from_json(text: str) -> Candidate:
    raw = json.loads(text)
    return Candidate(task=raw["task"], files={path: base64.b64decode(data) for path, data in raw["files"].items()})
