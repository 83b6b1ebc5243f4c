"""The pinned images, one per GPU vendor, each locked by digest in third_party/<vendor>/image.lock.

A tag can be moved to other bits at any time; a digest cannot. The lock names the image by
repository and tag (for people) and by digest (for machines); `arena image resolve` fills the
digest in with `docker buildx imagetools inspect`, `skopeo inspect` or `crane digest`, whichever
exists and answers. Until then the lock says `resolved: false` and the docker executor refuses it.
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from arena.executors.base import ExecutorError

# Relative to the repository root: the image the docker executor runs on each vendor's GPUs.
LOCK_PATHS = {
    "rocm": Path("third_party/rocm/image.lock"),
    "cuda": Path("third_party/cuda/image.lock"),
}
LOCK_PATH = LOCK_PATHS["rocm"]
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_RESOLVE_TIMEOUT_S = 300
# argv -> (exit code, stdout, stderr); tests replace it.
CommandRunner = Callable[[list[str]], tuple[int, str, str]]


@dataclass(frozen=True)
class ImageLock:
    repository: str  # e.g. rocm/pytorch (Docker Hub) or a full registry path
    tag: str  # what people call it; never used to pull once resolved
    digest: str = ""  # sha256:<64 hex> of the manifest the tag named when resolved; "" until then
    resolved: bool = False  # True once digest was read from the registry
    resolved_date: str = ""  # UTC date of the resolution, YYYY-MM-DD
    resolved_with: str = ""  # the tool that resolved it: docker-buildx | skopeo | crane
    contents: str = ""  # what the tag is documented to hold (OS, Python, torch, toolkit), for people

    @property
    def reference(self) -> str:
        """What docker pulls and runs: repository@digest (never the tag)."""
        return f"{self.repository}@{self.digest}"

    @property
    def tagged(self) -> str:
        return f"{self.repository}:{self.tag}"


def read_lock(path: Path) -> ImageLock:
    raw = json.loads(path.read_text(encoding="utf-8"))
    fields = {name: raw[name] for name in ImageLock.__dataclass_fields__ if name in raw}
    return ImageLock(**fields)


def write_lock(lock: ImageLock, path: Path) -> None:
    path.write_text(json.dumps(asdict(lock), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def lock_path(vendor: str) -> Path:
    """The lock of `vendor`'s image (rocm | cuda), relative to the repository root."""
    if vendor not in LOCK_PATHS:
        raise ExecutorError(f"no pinned image for {vendor!r}: expected one of {', '.join(LOCK_PATHS)}")
    return LOCK_PATHS[vendor]


def require_resolved(lock: ImageLock, where: Path = LOCK_PATH) -> ImageLock:
    """The lock, if it pins a digest; otherwise the error that says how to pin one."""
    if not lock.resolved or not _DIGEST.fullmatch(lock.digest):
        raise ExecutorError(
            f"the image {lock.tagged} is not resolved to a digest in {where}: run "
            "`arena image resolve` on a machine that reaches the registry (it needs docker buildx, "
            "skopeo or crane), commit the lock, then run the docker executor"
        )
    return lock


def _run_command(argv: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=_RESOLVE_TIMEOUT_S, check=False)
    return done.returncode, done.stdout, done.stderr


def resolvers() -> list[tuple[str, list[str]]]:
    """(name, argv prefix) of the tools here that can read a tag's digest, in order of preference."""
    found = []
    if shutil.which("docker") and _run_command(["docker", "buildx", "version"])[0] == 0:
        found.append(("docker-buildx", ["docker", "buildx", "imagetools", "inspect"]))
    if shutil.which("skopeo"):
        found.append(("skopeo", ["skopeo", "inspect"]))
    if shutil.which("crane"):
        found.append(("crane", ["crane", "digest"]))
    return found


def resolve_lock(
    lock: ImageLock,
    tools: list[tuple[str, list[str]]] | None = None,
    run: CommandRunner | None = None,
    today: datetime.date | None = None,
) -> ImageLock:
    """The lock with the digest its tag names now, read with the first tool that answers."""
    tools = resolvers() if tools is None else tools
    run = run or _run_command
    if not tools:
        raise ExecutorError(
            "cannot resolve the image: none of `docker buildx`, `skopeo` or `crane` is installed here; "
            "install one of them (and reach the registry), then run `arena image resolve` again"
        )
    problems = []
    for name, prefix in tools:
        target = f"docker://{lock.tagged}" if name == "skopeo" else lock.tagged
        code, out, err = run([*prefix, target])
        digest = _parse_digest(name, out) if code == 0 else ""
        if digest:
            date = (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat()
            return replace(lock, digest=digest, resolved=True, resolved_date=date, resolved_with=name)
        problems.append(f"{name}: {(err or out).strip()[-300:] or f'exit code {code}'}")
    raise ExecutorError(f"cannot resolve {lock.tagged}: " + "; ".join(problems))


def _parse_digest(tool: str, out: str) -> str:
    """skopeo prints JSON whose "Digest" is the top-level manifest's (the multi-arch index, as
    imagetools and crane report it); imagetools prints "Digest:   sha256:..."; crane only the digest."""
    if tool == "crane":
        digest = out.strip()
        return digest if _DIGEST.fullmatch(digest) else ""
    if tool == "skopeo":
        try:
            digest = str(json.loads(out).get("Digest", ""))
        except ValueError:
            return ""
        return digest if _DIGEST.fullmatch(digest) else ""
    match = re.search(r"^Digest:\s*(sha256:[0-9a-f]{64})\s*$", out, re.MULTILINE)
    return match.group(1) if match else ""
