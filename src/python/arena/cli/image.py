"""`arena image show | resolve [--lock FILE]`: the pinned ROCm image the docker executor runs.

`show` prints the lock; `resolve` asks the registry (through docker buildx or skopeo) which digest
the lock's tag names now and writes it into the lock, with the date and the tool.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from arena.executors.base import ExecutorError
from arena.executors.image import LOCK_PATH, read_lock, resolve_lock, write_lock

HELP = "show or resolve the pinned ROCm image (third_party/rocm/image.lock)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=("show", "resolve"), help="show the lock, or resolve its tag to a digest"
    )
    parser.add_argument(
        "--lock", type=Path, metavar="FILE", help=f"the lock file (default: <repo>/{LOCK_PATH})"
    )


def run(args: argparse.Namespace) -> int:
    path: Path = args.lock or args.repo_root / LOCK_PATH
    lock = read_lock(path)
    if args.action == "show":
        print(json.dumps(asdict(lock), indent=2, sort_keys=True))
        if not lock.resolved:
            print(
                "(not resolved: the docker executor refuses it; run `arena image resolve`)", file=sys.stderr
            )
        return 0
    try:
        resolved = resolve_lock(lock)
    except ExecutorError as error:
        print(f"arena image resolve: error: {error}", file=sys.stderr)
        return 1
    write_lock(resolved, path)
    print(f"{resolved.tagged} -> {resolved.digest} (with {resolved.resolved_with}); wrote {path}")
    return 0
