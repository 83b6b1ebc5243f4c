"""The docker executor: the harness child inside the pinned ROCm image, named by digest.

The parent stays on the host and does what run_harness does (static check, layout, job, deadline,
signed result); only the child moves into the container. The container gets the GPU devices, no
network, a read-only root with tmpfs scratch, the task, baseline and candidate folders and the
arena sources read-only, one GPU through HIP_VISIBLE_DEVICES, a memory limit, and one writable
folder for the result frame (descriptor 3 of the child, opened by the shell around it).
"""

from __future__ import annotations

import io
import os
import secrets
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, cast

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment, with_environment
from arena.executors.base import EXECUTOR_VERSION_KEY, ExecutorError
from arena.executors.image import LOCK_PATH, ImageLock, read_lock, require_resolved
from arena.harness.job import (
    LOG_TAIL,
    RESULT_FD,
    RESULT_LIMIT,
    SCRATCH,
    SHIPPED,
    failure,
    lay_out,
    log_tail,
    new_job,
    read_result,
    screen_candidate,
)
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.harness.version import ARENA_ROOT
from arena.task.task import Task

RUN_DIR = "/arena/run"  # task/, baseline/, candidate/ (read-only mounts)
SOURCE_DIR = "/arena/src"  # holds the arena package (read-only mount); PYTHONPATH
OUT_DIR = "/arena/out"  # the only writable mount: the result frame
SCRATCH_DIR = "/tmp"  # tmpfs: work/, home/, triton/
CONTAINER_DIRS = {
    **{name: f"{RUN_DIR}/{name}" for name in SHIPPED},
    **{name: f"{SCRATCH_DIR}/{name}" for name in SCRATCH},
}
RESULT_NAME = "result"
_PULL_TIMEOUT_S = 3600
_KILL_TIMEOUT_S = 30


@dataclass(frozen=True)
class DockerExecutor:
    image: ImageLock  # must be resolved to a digest (require_resolved)
    memory: str = "64g"  # --memory and --memory-swap (no swap)
    scratch: str = "32g"  # size of the tmpfs at /tmp (builds, Triton cache, home)
    shm_size: str = "16g"
    pids_limit: int = 4096
    docker: str = "docker"  # the docker client
    start_grace_s: float = 60.0  # container start-up on top of the harness's own timeout
    _present: set[str] = field(default_factory=set, compare=False, repr=False)  # images known pulled

    @classmethod
    def from_repo(cls, repo_root: Path, **options: object) -> DockerExecutor:
        """The executor for the image locked in the repository; ExecutorError if it is unresolved."""
        return cls(require_resolved(read_lock(repo_root / LOCK_PATH)), **options)  # type: ignore[arg-type]

    def run(
        self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings
    ) -> HarnessResult:
        require_resolved(self.image)
        chosen, refused = screen_candidate(task, candidate, repo_root)
        if refused is not None:
            return refused
        self.ensure_image()
        with tempfile.TemporaryDirectory(prefix="arena-docker-") as tmp:
            folder = Path(tmp)
            (folder / "run").mkdir()
            (folder / "out").mkdir()
            lay_out(task, chosen, repo_root, folder / "run")
            key = secrets.token_bytes(32)
            # Inside, the one visible GPU is device 0.
            job = new_job(task, replace(settings, device=0), CONTAINER_DIRS, key)
            name = f"arena-{secrets.token_hex(8)}"
            argv = self.command(folder, settings, name)
            stdout, stderr, timed_out = self._run_container(argv, job.to_json(), name, settings)
            log = log_tail(stdout, stderr)
            if timed_out:
                return failure(
                    "TIMEOUT", f"no result within {settings.timeout_s:g} s; the container was killed", log
                )
            return read_result(_read_bounded(folder / "out" / RESULT_NAME), key, log, task, settings)

    def command(self, folder: Path, settings: HarnessSettings, name: str) -> list[str]:
        """The `docker run` argv for one job laid out in `folder` (run/ and out/)."""
        mounts = [f"{folder / 'run' / d}:{RUN_DIR}/{d}:ro" for d in SHIPPED]
        mounts += [f"{ARENA_ROOT}:{SOURCE_DIR}/arena:ro", f"{folder / 'out'}:{OUT_DIR}:rw"]
        env = {
            "HIP_VISIBLE_DEVICES": str(settings.device),
            "PYTHONPATH": SOURCE_DIR,
            "HOME": CONTAINER_DIRS["home"],
            "TMPDIR": CONTAINER_DIRS["work"],
            "TRITON_CACHE_DIR": CONTAINER_DIRS["triton"],
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "PYTHONUNBUFFERED": "1",
            "ARENA_IMAGE_DIGEST": self.image.digest,
        }
        if settings.backend == "cpu":
            env["TRITON_INTERPRET"] = "1"
        scratch = " ".join(CONTAINER_DIRS[d] for d in SCRATCH)
        script = (
            f"mkdir -p {scratch} && cd {CONTAINER_DIRS['work']} && "
            f"exec python3 -m arena.harness.child {RESULT_FD}>{OUT_DIR}/{RESULT_NAME}"
        )
        argv = [self.docker, "run", "--rm", "-i", "--name", name, "--pull", "never"]
        argv += ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video"]
        argv += [arg for gid in device_groups() for arg in ("--group-add", str(gid))]
        argv += ["--user", f"{os.getuid()}:{os.getgid()}"]
        argv += [
            "--network",
            "none",
            "--read-only",
            "--tmpfs",
            f"{SCRATCH_DIR}:rw,exec,nosuid,size={self.scratch}",
        ]
        argv += ["--memory", self.memory, "--memory-swap", self.memory, "--shm-size", self.shm_size]
        argv += ["--pids-limit", str(self.pids_limit), "--cap-drop", "ALL"]
        argv += ["--security-opt", "no-new-privileges", "--ulimit", "core=0"]
        for mount in mounts:
            argv += ["-v", mount]
        for key, value in env.items():
            argv += ["-e", f"{key}={value}"]
        argv += ["--workdir", SCRATCH_DIR, "--entrypoint", "/bin/sh", self.image.reference, "-c", script]
        return argv

    def ensure_image(self) -> None:
        """Pull the locked image once, before any deadline starts (runs use --pull never)."""
        reference = self.image.reference
        if reference in self._present:
            return
        inspect = [self.docker, "image", "inspect", "--format", "{{.Id}}", reference]
        if _quiet(inspect, 60) != 0 and _quiet([self.docker, "pull", reference], _PULL_TIMEOUT_S) != 0:
            raise ExecutorError(
                f"cannot pull {reference} (is the docker daemon running and the registry reachable?)"
            )
        self._present.add(reference)

    def _run_container(
        self, argv: list[str], job: bytes, name: str, settings: HarnessSettings
    ) -> tuple[bytes, bytes, bool]:
        """Run it with the job on stdin; at the deadline kill the container (not just the client)."""
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as error:
            raise ExecutorError(f"cannot start {self.docker!r}: {error}") from None
        tails = [bytearray(), bytearray()]
        readers = [
            _tail_reader(stream, tail) for stream, tail in zip((process.stdout, process.stderr), tails)
        ]
        try:
            assert process.stdin is not None
            process.stdin.write(job)
            process.stdin.close()
        except BrokenPipeError:
            pass
        timed_out = False
        try:
            process.wait(timeout=settings.timeout_s + self.start_grace_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _quiet([self.docker, "kill", name], _KILL_TIMEOUT_S)
            process.kill()
            process.wait()
        for reader in readers:
            reader.join(timeout=5)
        return bytes(tails[0]), bytes(tails[1]), timed_out

    def describe(self) -> dict[str, str]:
        return {
            "executor": "docker",
            "image": self.image.tagged,
            "image_digest": self.image.digest,
            "memory": self.memory,
        }

    def isolation(self) -> str:
        return f"docker {self.image.tagged}"  # no network, read-only root, dropped capabilities

    def environment(self, base: Environment) -> Environment:
        """This host's GPU, the image's digest; the host's package versions do not apply (the
        child reports the image's own)."""
        return with_environment(base, {EXECUTOR_VERSION_KEY: "docker"}, image_digest=self.image.digest)


def device_groups() -> list[int]:
    """The host groups owning the GPU device nodes (a container user needs them by number: the
    image's /etc/group need not know the host's render group)."""
    nodes = (
        [Path("/dev/kfd"), *sorted(Path("/dev/dri").glob("renderD*"))]
        if Path("/dev/dri").exists()
        else [Path("/dev/kfd")]
    )
    groups = set()
    for node in nodes:
        try:
            groups.add(node.stat().st_gid)
        except OSError:
            continue
    return sorted(groups)


def _quiet(argv: list[str], timeout_s: float) -> int:
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False).returncode
    except (OSError, subprocess.SubprocessError):
        return -1


def _tail_reader(stream: IO[bytes] | None, tail: bytearray) -> threading.Thread:
    """A thread keeping the last LOG_TAIL bytes of `stream` in `tail`."""

    def read() -> None:
        assert stream is not None
        # Popen's pipes are buffered readers; read1 returns what has arrived without waiting for 64 KiB.
        source = cast(io.BufferedIOBase, stream)
        for chunk in iter(lambda: source.read1(1 << 16), b""):
            tail.extend(chunk)
            del tail[: max(0, len(tail) - LOG_TAIL)]

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _read_bounded(path: Path) -> bytes:
    """The result frame; empty when missing, cut (so it fails verification) when oversized."""
    try:
        with path.open("rb") as handle:
            return handle.read(RESULT_LIMIT + 1)[:RESULT_LIMIT]
    except OSError:
        return b""
