"""The measurement environment: the Python that harness children run under, apart from the
control plane (CLI, runner, service) that starts them.

Two kinds:
- "bundled": this process's own interpreter (a checkout under Pants, or an artifact built with
  the CPU torch inside). The default. Its children's import path is built from explicit roots,
  never from this process's sys.path (which holds the working folder under `python -m`, a
  checkout's root when started from one): the folder holding the arena package (a PEX's code
  folder), the generated protobuf code's when it lies elsewhere, and the folders the
  interpreter's installed distributions lie in (site-packages; a PEX's installed wheels).
- "host": an interpreter named by ARENA_PYTHON (or a command's --python), e.g. a GPU machine's
  python3 with its CUDA or ROCm PyTorch. Children get only the arena package on their import
  path (a folder linking to it); torch, triton and numpy come from that interpreter's own
  site-packages.

The chosen interpreter is probed once per process (package versions, its prefixes), checked
(torch, triton and numpy present and new enough: UnusableEnvironment names what is missing),
and recorded in the environment fingerprint. Whether its torch can use this machine's GPU costs
an `import torch`, so it is asked only where a GPU is present (gpu_usable), and the answer is kept
on disk per interpreter and package versions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from arena.errors import NoDevice, UnusableEnvironment

PYTHON_VARIABLE = "ARENA_PYTHON"
ARENA_PACKAGE = Path(__file__).resolve().parent.parent  # the arena package folder
# Distributions whose versions change what a kernel computes or how fast it runs.
PACKAGES = ("torch", "triton", "numpy", "hip-python", "cuda-python", "cuda-bindings")
REQUIRED = {"torch": (2, 4), "triton": (3, 0), "numpy": (1, 26)}  # oldest the harness is written for
OLDEST_PYTHON = (3, 10)
_TIMEOUT_S = 120  # an `import torch` on a cold disk can take tens of seconds

# Run by the measurement interpreter: what it is and what it has, as JSON on stdout. Nothing here
# imports a GPU library; the GPU question is a second script.
_DESCRIBE = r"""
import importlib.metadata as metadata, importlib.util as util, json, platform, sys
packages = sys.argv[1].split(",")
try:
    harness = util.find_spec("arena.harness.child") is not None
except ImportError:
    harness = False
versions = {}
for name in packages:
    try:
        versions[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
print(json.dumps({
    "python": platform.python_version(),
    "implementation": platform.python_implementation(),
    "executable": sys.executable,
    "prefixes": sorted({sys.prefix, sys.base_prefix, sys.exec_prefix}),
    "path": [p for p in sys.path if p],
    "versions": versions,
    "importable": {m: util.find_spec(m) is not None for m in ("torch", "triton", "numpy")},
    "harness": harness,
}))
"""
_GPU = r"""
import json, torch
print(json.dumps({
    "available": bool(torch.cuda.is_available()),
    "count": torch.cuda.device_count() if torch.cuda.is_available() else 0,
    "cuda": torch.version.cuda or "",
    "hip": getattr(torch.version, "hip", None) or "",
}))
"""


@dataclass(frozen=True)
class Measurement:
    """Where harness children run: `python -m arena.harness.child` with PYTHONPATH=`path`."""

    kind: str  # bundled | host
    python: str
    path: tuple[str, ...]
    versions: Mapping[str, str] = field(default_factory=dict)  # python and PACKAGES, as the interpreter has them
    folders: tuple[str, ...] = ()  # its prefixes and import roots: what a sandbox must show read-only

    def describe(self) -> str:
        torch = self.versions.get("torch", "no torch")
        return f"{self.kind} environment {self.python} (Python {self.versions.get('python', '?')}, torch {torch})"


def chosen_python(environ: Mapping[str, str] = os.environ) -> str:
    """The interpreter ARENA_PYTHON names ("" = the bundled one)."""
    return environ.get(PYTHON_VARIABLE, "").strip()


def select_python(python: str | None) -> None:
    """A command's --python: from here on, this process and its children measure with `python`."""
    if python:
        os.environ[PYTHON_VARIABLE] = python


def current_measurement() -> Measurement:
    """The measurement environment this process chose, probed and checked once per interpreter."""
    return _measurement(chosen_python())


def forget_measurements() -> None:
    """Probe again on the next call (tests; an interpreter upgraded under a long-lived runner
    is picked up by the runner's restart, not by this)."""
    _measurement.cache_clear()


@lru_cache(maxsize=4)
def _measurement(python: str) -> Measurement:
    if not python:
        return _checked(_described("bundled", sys.executable, import_roots()))
    resolved = _resolve(python)
    return _checked(_described("host", resolved, (str(_arena_only()),)))


def import_roots() -> tuple[str, ...]:
    """The bundled environment's import path for harness children, from explicit roots only: the
    folder holding the arena package, the generated protobuf code's root when it is another, then
    the interpreter's site-packages and the folders its installed distributions lie in (a PEX's
    installed wheels), in the order this interpreter searches them (a PEX leaves the base
    interpreter's site-packages off: so do its children). Never an entry of sys.path as such:
    `python -m arena.cli.main` puts its working folder there (a checkout's root: tasks,
    exemplars, .arena), and a test runner its own folders."""
    searched: dict[str, int] = {}
    for index, entry in enumerate(sys.path):
        if entry:
            searched.setdefault(os.path.realpath(entry), index)
    installed = [*site.getsitepackages(), *(sysconfig.get_path(name) for name in ("purelib", "platlib"))]
    installed += [_distribution_root(dist) for dist in _distributions()]
    found = sorted(
        (root for root in set(installed) if root and os.path.realpath(root) in searched),
        key=lambda root: searched[os.path.realpath(root)],
    )
    return _unique((str(ARENA_PACKAGE.parent), _package_root("arena.v1"), *found))


def _package_root(name: str) -> str:
    """The folder the package `name` is imported from lies in, its top package's parent ("" when
    it is not importable here)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return ""
    folder = Path(locations[0])
    for _ in name.split("."):
        folder = folder.parent
    return str(folder)


def _distributions() -> list[object]:
    import importlib.metadata as metadata

    return list(metadata.distributions())


def _distribution_root(dist: object) -> str:
    """The folder a distribution's files lie in (the one holding its .dist-info)."""
    try:
        return str(Path(str(dist.locate_file(""))).resolve())  # type: ignore[attr-defined]
    except (OSError, TypeError, ValueError, AttributeError):
        return ""


def _arena_only() -> Path:
    """A folder holding nothing but a link to this arena package: the host interpreter's import
    path. The package's own parent may hold this artifact's other packages (built for another
    Python), which must not shadow the host's."""
    folder = _cache_folder() / f"path-{hashlib.sha256(str(ARENA_PACKAGE).encode()).hexdigest()[:16]}"
    link = folder / "arena"
    if not (link.is_symlink() and os.readlink(link) == str(ARENA_PACKAGE)):
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".arena-{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(ARENA_PACKAGE, target_is_directory=True)
        os.replace(temporary, link)  # atomic: a concurrent process sees the old link or the new
    return folder


def _resolve(python: str) -> str:
    found = python if os.sep in python else _which(python)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UnusableEnvironment(
            f"{PYTHON_VARIABLE}={python!r} is not an executable Python interpreter: name the python3 that has "
            "the GPU build of torch and triton (e.g. /usr/bin/python3)"
        )
    return os.path.abspath(found)


def _which(name: str) -> str:
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, name)
        if folder and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return ""


def _run(python: str, path: tuple[str, ...], script: str, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=os.pathsep.join(path), PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run(
            [python, "-c", script, *args], capture_output=True, text=True, timeout=_TIMEOUT_S, env=env, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise UnusableEnvironment(f"the measurement interpreter {python} did not run: {error}") from error
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise UnusableEnvironment(f"the measurement interpreter {python} failed: {tail[0][:300]}")
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as error:
        raise UnusableEnvironment(f"the measurement interpreter {python} gave no answer: {error}") from error
    if not isinstance(answer, dict):
        raise UnusableEnvironment(f"the measurement interpreter {python} gave an unexpected answer")
    return answer


def _described(kind: str, python: str, path: tuple[str, ...]) -> Measurement:
    if kind == "bundled":  # this very interpreter: no process needed
        import importlib.metadata as metadata
        import importlib.util as util
        import platform

        versions = {"python": platform.python_version()}
        for name in PACKAGES:
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                pass
        importable = {m: util.find_spec(m) is not None for m in REQUIRED}
        interpreter = os.path.dirname(os.path.realpath(sys.executable))
        folders = (sys.prefix, sys.base_prefix, sys.exec_prefix, interpreter, *path)
        return _with_missing(Measurement(kind, python, path, versions, _unique(folders)), importable)
    answer = _run(python, path, _DESCRIBE, ",".join(PACKAGES))
    versions = {"python": str(answer.get("python", "")), **{k: str(v) for k, v in _mapping(answer, "versions").items()}}
    prefixes = _strings(answer, "prefixes")
    imports = tuple(p for p in _strings(answer, "path") if os.path.isabs(p))
    importable = {k: bool(v) for k, v in _mapping(answer, "importable").items()}
    folders = _unique((*prefixes, *imports, os.path.dirname(os.path.realpath(python)), str(ARENA_PACKAGE)))
    found = _with_missing(Measurement(kind, python, path, versions, folders), importable)
    if not answer.get("harness"):
        raise UnusableEnvironment(f"the {found.describe()} cannot import the arena harness from {path[0]}")
    return found


def _mapping(answer: Mapping[str, object], key: str) -> dict[str, object]:
    value = answer.get(key)
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _strings(answer: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = answer.get(key)
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _with_missing(measurement: Measurement, importable: Mapping[str, bool]) -> Measurement:
    missing = sorted(name for name in REQUIRED if not importable.get(name))
    if missing:
        hint = (
            " This is the light command line (no torch inside): on a GPU machine name its python3; on a CPU "
            "machine use the bundled one (./pants run //:arena-bundled -- ..., or dist/arena-bundled.pex)."
            if measurement.kind == "bundled"
            else ""
        )
        raise UnusableEnvironment(
            f"the {measurement.describe()} cannot import {', '.join(missing)}: harness children need torch, "
            f"triton and numpy. Name an interpreter that has them with --python PATH or {PYTHON_VARIABLE}=PATH." + hint
        )
    return measurement


def _checked(measurement: Measurement) -> Measurement:
    python = _version_tuple(measurement.versions.get("python", ""))
    if python < OLDEST_PYTHON:
        raise UnusableEnvironment(
            f"the {measurement.describe()} is older than Python {'.'.join(map(str, OLDEST_PYTHON))}"
        )
    for name, oldest in REQUIRED.items():
        version = _version_tuple(measurement.versions.get(name, ""))
        if version and version < oldest:
            raise UnusableEnvironment(
                f"the {measurement.describe()} has {name} {measurement.versions[name]}, older than "
                f"{'.'.join(map(str, oldest))}, the oldest the harness supports"
            )
    return measurement


def gpu_usable(measurement: Measurement, backend: str, gpu_name: str) -> None:
    """NoDevice when this machine has a GPU (`backend` cuda or rocm, found by the parent's probe)
    that the measurement environment's torch cannot use: a suite would otherwise run quietly on
    the CPU. The answer is kept on disk per interpreter and package versions."""
    if backend not in ("cuda", "rocm"):
        return
    key = hashlib.sha256(json.dumps([measurement.python, dict(measurement.versions)], sort_keys=True).encode())
    cached = _cache_folder() / f"gpu-{key.hexdigest()[:24]}.json"
    answer: dict[str, object] | None = None
    if cached.is_file():
        try:
            answer = json.loads(cached.read_text())
        except (OSError, ValueError):
            answer = None
    if answer is None:
        answer = _run(measurement.python, measurement.path, _GPU)
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(answer))
        except OSError:
            pass  # a read-only home only costs the next process an import
    built_for = "hip" if backend == "rocm" else "cuda"
    if not answer.get("available") or not answer.get(built_for):
        build = f"{built_for} {answer.get(built_for)}" if answer.get(built_for) else f"no {built_for.upper()} build"
        raise NoDevice(
            f"this machine has {gpu_name or 'a ' + backend + ' GPU'}, but the {measurement.describe()} cannot use it "
            f"(torch: {build}, a GPU visible: {bool(answer.get('available'))}). Name a Python whose torch is built "
            f"for this GPU with --python PATH or {PYTHON_VARIABLE}=PATH, or pass --backend cpu to check on the CPU"
        )


def _cache_folder() -> Path:
    return Path.home() / ".cache" / "arena" / "measurement"


def _version_tuple(text: str) -> tuple[int, ...]:
    numbers: list[int] = []
    for part in text.split("+")[0].split("."):
        digits = "".join(c for c in part if c.isdigit())
        if not digits or digits != part[: len(digits)]:
            if digits:
                numbers.append(int(digits))
            break
        numbers.append(int(digits))
    return tuple(numbers[:3])


def _unique(folders: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.abspath(f) for f in folders if f and os.path.isdir(f)))
