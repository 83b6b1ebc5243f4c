"""A cold CI run, as CI runs it, on a fresh clone with every cache pointed at an empty folder (#34).

    python3 bench/ci_cold.py [--tasks 214] [--json ci.json] [--keep]

Clones this repository's HEAD into a temporary folder and runs `CI=true bash .ci/run` there with
Pants' local store, its named caches (Pex, pip), the `./pants` bootstrap folder and arena's own
caches (XDG_CACHE_HOME) all new and empty: what a fresh machine of this kind pays, less the Debian
packages (installed once per machine) and the npm registry's own cache. Prints each CI step's
finish time (the `ci: ...` lines of .ci/run) and the wall, and with --json writes them.

--tasks 214 first grows the clone's tasks/ to the reference arena's mix (triton2triton 148,
hip2hip 36, torch2hip 26, repository 4) with renamed copies of ours (bench/corpus_scale.py's
clones) and records each copy in tasks/validated.json under its source's validation: a copy's
files are its source's, so its full validation is its source's (the copy is never committed).
That is the steady state of a 214-task corpus: each task recorded when it landed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus_scale import MIX, clone_name, rename_task

from arena.validation.record import MANIFEST, folder_hash

REPO = Path(__file__).resolve().parents[1]


def grow_corpus(clone: Path) -> int:
    """Copies of the clone's tasks up to MIX, each recorded as its source is; returns the count."""
    record = json.loads((clone / MANIFEST).read_text())
    total = 0
    for category, count in MIX.items():
        folder = clone / "tasks" / category
        originals = sorted(p for p in folder.iterdir() if (p / "BUILD").is_file())
        for i in range(count):
            source = originals[i % len(originals)]
            copy = i // len(originals) + 1
            total += 1
            if copy == 1:
                continue
            name = clone_name(source.name, copy)
            target = folder / name
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            (target / "BUILD").write_text(rename_task((target / "BUILD").read_text(), name))
            entry = record["tasks"][f"tasks/{category}/{source.name}"]
            record["tasks"][f"tasks/{category}/{name}"] = {**entry, "hash": folder_hash(target)}
    (clone / MANIFEST).write_text(json.dumps(record, indent=1) + "\n")
    return total


def cold_env(scratch: Path) -> dict[str, str]:
    folders = {
        "ARENA_BOOTSTRAP_DIR": "bootstrap",
        "PANTS_LOCAL_STORE_DIR": "lmdb_store",
        "PANTS_NAMED_CACHES_DIR": "named_caches",
        "XDG_CACHE_HOME": "xdg_cache",
    }
    for name in folders.values():
        (scratch / name).mkdir()
    return {**os.environ, "CI": "true", **{k: str(scratch / v) for k, v in folders.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, choices=(0, 214), default=0, help="214: grow the corpus first")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the clone and the caches")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ci-cold-"))
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    tasks = grow_corpus(clone) if args.tasks else None
    env = cold_env(scratch)
    began = time.monotonic()
    steps: dict[str, int] = {}
    with subprocess.Popen(
        ["bash", ".ci/run"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as ci:
        assert ci.stdout is not None
        tail: list[str] = []
        for line in ci.stdout:
            sys.stdout.write(line)
            tail = (tail + [line])[-40:]
            found = re.match(r"ci: (.*) done at (\d+) s", line)
            if found:
                steps[found.group(1)] = int(found.group(2))
    wall = time.monotonic() - began
    subprocess.run(["pkill", "-f", f"pantsd \\[{clone}\\]"], check=False)  # the clone's daemon, left by CI
    summary = next((line.strip() for line in reversed(tail) if re.search(r"\d+ passed, \d+ failed", line)), "")
    figures = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "head": head.stdout.strip(),
        "tasks": tasks,
        "exit": ci.returncode,
        "wall_s": round(wall),
        "steps_s": steps,
        "tests": summary,
        "cores": os.cpu_count(),
        "load_after": os.getloadavg(),
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    if not args.keep:
        subprocess.run(["chmod", "-R", "u+w", str(scratch)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(ci.returncode)


if __name__ == "__main__":
    main()
