"""What the parent's byte code (arena/harness/bytecode.py) saves a harness child's `import torch`.

    PYTHONPATH=src/python python3 bench/bytecode_gain.py [--python PY] [--repeats 5] [--json FILE]

Times `import torch` in fresh processes of PY (default: this interpreter), as a harness child
runs it (PYTHONDONTWRITEBYTECODE=1), three ways: as installed; without byte code (an empty
PYTHONPYCACHEPREFIX: what a child meets where the installation ships none, as on the H200
machine); and with the folder bytecode.compile_imports makes for PY (the product's function: PY
imports what a judge and its worker import, writing their byte code there; its time reported
once). The medians go into the journal.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from arena.environment.measurement import Measurement
from arena.harness.bytecode import compile_imports


def import_seconds(python: str, env: dict[str, str], repeats: int) -> list[float]:
    walls = []
    for _ in range(repeats):
        began = time.perf_counter()
        subprocess.run([python, "-c", "import torch"], env=env, check=True)
        walls.append(round(time.perf_counter() - began, 3))
    return walls


def site_packages(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True
    )
    return done.stdout.strip() or sysconfig.get_path("purelib")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.python = shutil.which(args.python) or args.python  # the children's PATH is not ours
    base = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "empty"
        empty.mkdir()
        roots = (site_packages(args.python), str(Path(__file__).resolve().parents[1] / "src" / "python"))
        measurement = Measurement("host", args.python, roots)
        began = time.perf_counter()
        folder = compile_imports(measurement, Path(scratch) / "compiled")
        compiled_s = round(time.perf_counter() - began, 1)
        if folder is None:
            raise SystemExit("compile_imports made nothing")
        result = {
            "python": args.python,
            "compile_s": compiled_s,
            "as_installed": import_seconds(args.python, base, args.repeats),
            "no_byte_code": import_seconds(args.python, {**base, "PYTHONPYCACHEPREFIX": str(empty)}, args.repeats),
            "parents_byte_code": import_seconds(
                args.python, {**base, "PYTHONPYCACHEPREFIX": str(folder)}, args.repeats
            ),
        }
    for name in ("as_installed", "no_byte_code", "parents_byte_code"):
        print(f"{name}: median {statistics.median(result[name]):.2f} s {result[name]}")
    print(f"compile_imports once: {compiled_s} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
