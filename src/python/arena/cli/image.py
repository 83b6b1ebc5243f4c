"""`arena image show | resolve [--vendor rocm|cuda] [--lock FILE]`: the pinned images the docker executor runs.

`show` prints the locks; `resolve` asks the registry (through docker buildx, skopeo or crane) which
digest each lock's tag names now and writes it into the lock, with the date and the tool. Without
--vendor both vendors' locks are handled; --lock names one lock file instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from arena.executors.base import ExecutorError
from arena.executors.image import LOCK_PATHS, read_lock, resolve_lock, write_lock

HELP = "show or resolve the pinned ROCm and CUDA images (third_party/{rocm,cuda}/image.lock)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("show", "resolve"), help="show the locks, or resolve their tags to digests")
    parser.add_argument("--vendor", choices=tuple(LOCK_PATHS), help="only this vendor's image (default: all)")
    parser.add_argument("--lock", type=Path, metavar="FILE", help="one lock file instead of the repository's")


def lock_files(args: argparse.Namespace) -> list[Path]:
    if args.lock is not None:
        return [args.lock]
    vendors = [args.vendor] if args.vendor else list(LOCK_PATHS)
    return [args.repo_root / LOCK_PATHS[vendor] for vendor in vendors]


def run(args: argparse.Namespace) -> int:
    paths = lock_files(args)
    if args.action == "show":
        for path in paths:
            lock = read_lock(path)
            print(json.dumps({"lock": str(path), **asdict(lock)}, indent=2, sort_keys=True))
            if not lock.resolved:
                refused = "not resolved: the docker executor refuses it; run `arena image resolve`"
                print(f"({path}: {refused})", file=sys.stderr)
        return 0
    failed = 0
    for path in paths:
        try:
            resolved = resolve_lock(read_lock(path))
        except ExecutorError as error:
            print(f"arena image resolve: error: {path}: {error}", file=sys.stderr)
            failed += 1
            continue
        write_lock(resolved, path)
        print(f"{resolved.tagged} -> {resolved.digest} (with {resolved.resolved_with}); wrote {path}")
    return 1 if failed else 0
