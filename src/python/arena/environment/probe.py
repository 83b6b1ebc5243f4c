"""A cheap probe, in the parent, of the machine an evaluation will run on; its hash keys the cache.

Nothing here imports torch or triton: the GPU comes from the vendor's command-line tool, the
compilers from theirs, and the package versions from the measurement environment's metadata
(arena.environment.measurement), which may be another interpreter than this one. The harness
child reports a fuller picture (clocks, peaks) afterwards.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from dataclasses import replace
from functools import lru_cache

from arena.environment.environment import Environment, fingerprint_environment
from arena.environment.measurement import current_measurement, gpu_usable
from arena.environment.users import Users, users_from

IMAGE_DIGEST_VARIABLE = "ARENA_IMAGE_DIGEST"
SANDBOX_VARIABLE = "ARENA_SANDBOX"  # "off": harness children run without the OS sandbox
USER_VARIABLE = "ARENA_SANDBOX_USER"  # "FIRST-LAST" or "uid[:gid]": whom a root runner's children run as (users.py)
_PROBE_TIMEOUT_S = 20


def _command(argv: list[str]) -> str:
    """The command's stdout, stripped; "" when it is missing, fails or hangs."""
    if shutil.which(argv[0]) is None:
        return ""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _compilers() -> dict[str, str]:
    versions = {}
    nvcc = re.search(r"release ([\d.]+)", _command(["nvcc", "--version"]))
    if nvcc:
        versions["nvcc"] = nvcc.group(1)
    hipcc = re.search(r"HIP version: (\S+)", _command(["hipcc", "--version"]))
    if hipcc:
        versions["hipcc"] = hipcc.group(1)
    return versions


def _nvidia_gpu() -> dict[str, str]:
    text = _command(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"])
    if not text:
        return {}
    name, _, rest = text.splitlines()[0].partition(",")
    arch, _, driver = rest.partition(",")
    arch = arch.strip()
    return {
        "backend": "cuda",
        "gpu_name": name.strip(),
        "gpu_arch": f"sm_{arch.replace('.', '')}" if arch else "",
        "driver": driver.strip(),
    }


def _rocm_gpu() -> dict[str, str]:
    text = _command(["rocm-smi", "--showproductname", "--json"])
    if not text:
        return {}
    try:
        cards = json.loads(text)
        card = next(iter(cards.values()))
    except (ValueError, StopIteration, AttributeError):
        return {"backend": "rocm"}
    return {
        "backend": "rocm",
        "gpu_name": str(card.get("Card Series") or card.get("Card series") or ""),
        "gpu_arch": str(card.get("GFX Version") or ""),
        "driver": _command(["cat", "/sys/module/amdgpu/version"]),
    }


def child_users() -> Users | None:
    """Whom harness children run as when this process is root: a uid of its own each, leased
    from ARENA_SANDBOX_USER's range (users.py); never root. None when this process is not root:
    children run as its own user, each in a user namespace of its own."""
    return users_from(USER_VARIABLE)


@lru_cache(maxsize=1)
def sandbox_tool() -> str:
    """The OS sandbox harness children run in here: "bwrap <version>" when bubblewrap can make
    its namespaces on this machine (tried once; as root, with the child started through setpriv
    as a user of its own: child_users()), "" when it is missing, refused, or turned off with ARENA_SANDBOX=off.
    Recorded in every environment, so it is part of the fingerprint."""
    if os.environ.get(SANDBOX_VARIABLE, "").strip().lower() in ("off", "0", "no", "false"):
        return ""
    if shutil.which("bwrap") is None:
        return ""
    users = child_users()
    if users is None:
        trial = ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/", "true"]
    else:  # the range's first user, unleased: the trial runs `true` and nothing of a candidate's
        uid, gid = users.first, users.gid or users.first
        trial = ["bwrap", "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/"]
        trial += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "setpriv", f"--reuid={uid}"]
        trial += [f"--regid={gid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "true"]
    try:
        if subprocess.run(trial, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False).returncode != 0:
            return ""
    except (OSError, subprocess.SubprocessError):
        return ""
    version = re.search(r"([\d.]+)", _command(["bwrap", "--version"]))
    return f"bwrap {version.group(1) if version else ''}".strip()


@lru_cache(maxsize=1)
def probe_host() -> Environment:
    """This machine as the parent sees it (GPU, driver, compilers, sandbox, image), without the
    measurement environment's packages: what a container or a remote executor records its own
    versions over. Probed once per process."""
    gpu = _nvidia_gpu() or _rocm_gpu() or {"backend": "cpu-interpreter"}
    environment = Environment(
        backend=gpu.get("backend", ""),
        gpu_name=gpu.get("gpu_name", ""),
        gpu_arch=gpu.get("gpu_arch", ""),
        driver=gpu.get("driver", ""),
        image_digest=os.environ.get(IMAGE_DIGEST_VARIABLE, ""),
        versions={"python": platform.python_version(), **_compilers(), "sandbox": sandbox_tool() or "none"},
    )
    return replace(environment, fingerprint=fingerprint_environment(environment))


@lru_cache(maxsize=1)
def probe_environment() -> Environment:
    """This machine and the measurement environment harness children run under here (its Python
    and packages replace this process's), fingerprinted; probed once per process.
    UnusableEnvironment when that environment lacks what the harness needs."""
    host = probe_host()
    measurement = current_measurement()
    versions = {**host.versions, **measurement.versions}
    environment = replace(host, versions=versions)
    return replace(environment, fingerprint=fingerprint_environment(environment))


def checked_environment(backend: str = "auto") -> Environment:
    """probe_environment(), and NoDevice when this machine has a GPU that the measurement
    environment's torch cannot use (unless `backend` is "cpu": checking on the CPU was asked for),
    so a command says so instead of quietly running on the CPU."""
    environment = probe_environment()
    if backend != "cpu":
        gpu_usable(current_measurement(), environment.backend, environment.gpu_name)
    return environment
