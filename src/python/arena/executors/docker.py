"""The docker executor: the harness child inside a pinned image, named by digest, on this host's GPU.

The parent stays on the host and does what run_harness does (static check, layout, job, deadline,
signed result); only the child moves into the container. The container gets the GPU devices of
its vendor (ROCm: /dev/kfd and /dev/dri; CUDA: the NVIDIA runtime's GPUs), no network, a read-only
root with tmpfs scratch, the task, baseline and candidate folders and the arena sources read-only,
one GPU through HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES, memory, process and file limits, and
one writable folder for the result frame (descriptor 3 of the child, opened by the shell around it).
It runs as this process's user, or, under a root runner, as a uid of its own leased for the
container's life (arena.environment.users): never root inside, and the kernel's count of its user's
tasks (--ulimit nproc) is its own.
The engine is docker or podman (same argv), chosen by ARENA_CONTAINER_ENGINE.
"""

from __future__ import annotations

import io
import os
import resource
import secrets
import shlex
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, cast

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment, with_environment
from arena.environment.probe import child_users
from arena.environment.users import ChildUser, lease
from arena.executors.base import EXECUTOR_VERSION_KEY, ExecutorError
from arena.executors.image import ImageLock, lock_path, read_lock, require_resolved
from arena.executors.leftovers import PREFIX, container_name, left_behind, this_process
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
ENGINE_VARIABLE = "ARENA_CONTAINER_ENGINE"  # e.g. "podman" or "podman --runtime runc"; default docker
# The variable that picks the one GPU a vendor's runtime shows (inside, it is device 0).
VISIBLE_DEVICES = {"rocm": "HIP_VISIBLE_DEVICES", "cuda": "CUDA_VISIBLE_DEVICES"}
VENDORS = ("rocm", "cuda", "cpu")  # cpu: no GPU passed in (Triton's interpreter; tests, local images)
_MAX_OPEN_FILES = 65536
_MAX_USER_PROCESSES = 32768
_PULL_TIMEOUT_S = 3600
_KILL_TIMEOUT_S = 30


def default_engine() -> tuple[str, ...]:
    """The container client's argv prefix, from ARENA_CONTAINER_ENGINE (default: docker)."""
    engine = tuple(shlex.split(os.environ.get(ENGINE_VARIABLE, "docker")))
    if not engine:
        raise ExecutorError(f"{ENGINE_VARIABLE} is empty: name the container client (docker or podman)")
    return engine


def host_vendor() -> str:
    """rocm where /dev/kfd exists, cuda where the NVIDIA control device does, else cpu."""
    if Path("/dev/kfd").exists():
        return "rocm"
    if Path("/dev/nvidiactl").exists() or Path("/dev/nvidia0").exists():
        return "cuda"
    return "cpu"


@dataclass(frozen=True)
class DockerExecutor:
    image: ImageLock  # must be resolved to a digest (require_resolved)
    vendor: str = "rocm"  # whose GPU goes in: rocm | cuda | cpu (none)
    memory: str = "64g"  # --memory and --memory-swap (no swap)
    scratch: str = "32g"  # size of the tmpfs at /tmp (builds, Triton cache, home)
    shm_size: str = "16g"
    pids_limit: int = 4096  # the container cgroup's processes and threads
    engine: tuple[str, ...] = field(default_factory=default_engine)  # docker, podman (+ global flags)
    start_grace_s: float = 60.0  # container start-up on top of the harness's own timeout
    _present: set[str] = field(default_factory=set, compare=False, repr=False)  # images known pulled
    _swept: set[str] = field(default_factory=set, compare=False, repr=False)  # engines cleared of leftovers

    def __post_init__(self) -> None:
        if self.vendor not in VENDORS:
            raise ExecutorError(f"vendor {self.vendor!r}: expected one of {', '.join(VENDORS)}")
        if not self.engine:
            raise ExecutorError("no container engine: expected docker or podman")

    @classmethod
    def from_repo(cls, repo_root: Path, vendor: str | None = None, **options: object) -> DockerExecutor:
        """The executor for the image the repository locks for `vendor` (default: this host's GPU);
        ExecutorError on a host without a GPU or when that image is not resolved to a digest."""
        vendor = vendor or host_vendor()
        if vendor == "cpu":
            raise ExecutorError(
                "the docker executor found no GPU here (neither /dev/kfd for ROCm nor /dev/nvidiactl "
                "for CUDA): it runs the pinned ROCm or CUDA image, locked by digest, on this host's GPU "
                "and does not fall back to the CPU"
            )
        where = lock_path(vendor)
        lock = require_resolved(read_lock(repo_root / where), where)
        return cls(lock, vendor, **options)  # type: ignore[arg-type]

    def run(self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings) -> HarnessResult:
        require_resolved(self.image)
        chosen, refused = screen_candidate(task, candidate, repo_root)
        if refused is not None:
            return refused
        self.ensure_image()
        self.sweep()
        with tempfile.TemporaryDirectory(prefix="arena-docker-") as tmp:
            folder = Path(tmp)
            (folder / "run").mkdir()
            (folder / "out").mkdir()
            lay_out(task, chosen, repo_root, folder / "run")
            key = secrets.token_bytes(32)
            # Inside, the one visible GPU is device 0.
            job = new_job(task, replace(settings, device=0), CONTAINER_DIRS, key)
            name = container_name(this_process())  # which process started it: leftovers.py
            users = child_users()  # a root runner's container runs as a uid of its own, never root
            held = None if users is None else lease(users)
            try:
                if held is not None:
                    os.chown(folder / "out", held.user.uid, held.user.gid)  # where it writes its frame
                argv = self.command(folder, settings, name, None if held is None else held.user)
                stdout, stderr, timed_out = self._run_container(argv, job.to_json(), name, settings)
            finally:
                if held is not None:  # the container is gone (_run_container removes it by name)
                    held.release()
            log = log_tail(stdout, stderr)
            if timed_out:
                return failure("TIMEOUT", f"no result within {settings.timeout_s:g} s; the container was killed", log)
            return read_result(_read_bounded(folder / "out" / RESULT_NAME), key, log, task, settings)

    def command(self, folder: Path, settings: HarnessSettings, name: str, user: ChildUser | None = None) -> list[str]:
        """The `docker run` argv for one job laid out in `folder` (run/ and out/), run as `user`
        (a root runner's lease: arena.environment.users) or as this process's own user."""
        mounts = [f"{folder / 'run' / d}:{RUN_DIR}/{d}:ro" for d in SHIPPED]
        mounts += [f"{ARENA_ROOT}:{SOURCE_DIR}/arena:ro", f"{folder / 'out'}:{OUT_DIR}:rw"]
        env = {
            "PYTHONPATH": SOURCE_DIR,
            "HOME": CONTAINER_DIRS["home"],
            "TMPDIR": CONTAINER_DIRS["work"],
            "TRITON_CACHE_DIR": CONTAINER_DIRS["triton"],
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "PYTHONUNBUFFERED": "1",
            "ARENA_IMAGE_DIGEST": self.image.digest,
        }
        if self.vendor in VISIBLE_DEVICES:
            env[VISIBLE_DEVICES[self.vendor]] = str(settings.device)
        if settings.backend == "cpu":
            env["TRITON_INTERPRET"] = "1"
        scratch = " ".join(CONTAINER_DIRS[d] for d in SCRATCH)
        script = (
            f"mkdir -p {scratch} && cd {CONTAINER_DIRS['work']} && "
            f"exec python3 -m arena.harness.child {RESULT_FD}>{OUT_DIR}/{RESULT_NAME}"
        )
        argv = [*self.engine, "run", "--rm", "-i", "--name", name, "--pull", "never"]
        argv += self.device_flags()
        argv += ["--user", f"{user.uid}:{user.gid}" if user is not None else f"{os.getuid()}:{os.getgid()}"]
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
        # Explicit and never above this host's own limits: an engine that raises them by default
        # (podman as root) cannot start containers where root may not raise limits. The cgroup's
        # --pids-limit is the container's bound; RLIMIT_NPROC counts the user's processes host-wide.
        files = host_limit(resource.RLIMIT_NOFILE, _MAX_OPEN_FILES)
        processes = host_limit(resource.RLIMIT_NPROC, _MAX_USER_PROCESSES)
        argv += ["--ulimit", f"nofile={files}:{files}", "--ulimit", f"nproc={processes}:{processes}"]
        for mount in mounts:
            argv += ["-v", mount]
        for key, value in env.items():
            argv += ["-e", f"{key}={value}"]
        argv += ["--workdir", SCRATCH_DIR, "--entrypoint", "/bin/sh", self.image.reference, "-c", script]
        return argv

    def device_flags(self) -> list[str]:
        """The vendor's GPUs, all of them (the visible-devices variable picks one)."""
        if self.vendor == "rocm":
            groups = [arg for gid in device_groups() for arg in ("--group-add", str(gid))]
            return ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video", *groups]
        if self.vendor == "cuda":
            # docker: the NVIDIA container toolkit's --gpus; podman: the toolkit's CDI devices.
            return ["--device", "nvidia.com/gpu=all"] if self.engine_name == "podman" else ["--gpus", "all"]
        return []

    @property
    def engine_name(self) -> str:
        return Path(self.engine[0]).name

    def ensure_image(self) -> None:
        """Pull the locked image once, before any deadline starts (runs use --pull never)."""
        reference = self.image.reference
        if reference in self._present:
            return
        inspect = [*self.engine, "image", "inspect", "--format", "{{.Id}}", reference]
        if _quiet(inspect, 60) != 0 and _quiet([*self.engine, "pull", reference], _PULL_TIMEOUT_S) != 0:
            raise ExecutorError(
                f"cannot pull {reference} with {shlex.join(self.engine)} (is the engine working, "
                "and the registry reachable?)"
            )
        self._present.add(reference)

    def sweep(self) -> list[str]:
        """Once per executor, before its first run: remove the containers this host's dead runners
        left running (arena.executors.leftovers); their names ([] when already done)."""
        engine = shlex.join(self.engine)
        if engine in self._swept:
            return []
        listing = [*self.engine, "ps", "--all", "--filter", f"name={PREFIX}", "--format", "{{.Names}}"]
        try:
            listed = subprocess.run(listing, capture_output=True, text=True, timeout=_KILL_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError):
            return []  # the run itself says what is wrong with the engine
        dead = left_behind(listed.stdout.split(), this_process()) if listed.returncode == 0 else []
        for name in dead:
            _quiet([*self.engine, "rm", "--force", name], _KILL_TIMEOUT_S)
        self._swept.add(engine)
        return dead

    def _run_container(
        self, argv: list[str], job: bytes, name: str, settings: HarnessSettings
    ) -> tuple[bytes, bytes, bool]:
        """Run it with the job on stdin; at the deadline kill the container (not just the client)."""
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            raise ExecutorError(f"cannot start {shlex.join(self.engine)!r}: {error}") from None
        tails = [bytearray(), bytearray()]
        readers = [_tail_reader(stream, tail) for stream, tail in zip((process.stdout, process.stderr), tails)]
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
            _quiet([*self.engine, "kill", name], _KILL_TIMEOUT_S)
            process.kill()
            process.wait()
            # Without a daemon (podman) the killed client never runs --rm's clean-up.
            _quiet([*self.engine, "rm", "--force", name], _KILL_TIMEOUT_S)
        for reader in readers:
            reader.join(timeout=5)
        return bytes(tails[0]), bytes(tails[1]), timed_out

    def describe(self) -> dict[str, str]:
        return {
            "executor": "docker",
            "image": self.image.tagged,
            "image_digest": self.image.digest,
            "memory": self.memory,
            "vendor": self.vendor,
            "engine": self.engine_name,
        }

    def isolation(self) -> str:
        return f"{self.engine_name} {self.image.tagged}"  # no network, read-only root, dropped capabilities

    def environment(self, base: Environment) -> Environment:
        """This host's GPU, the image's digest; the host's package versions do not apply (the
        child reports the image's own)."""
        return with_environment(base, {EXECUTOR_VERSION_KEY: "docker"}, image_digest=self.image.digest)


def host_limit(kind: int, cap: int) -> int:
    """This process's hard limit of `kind`, at most `cap`."""
    hard = resource.getrlimit(kind)[1]
    return cap if hard == resource.RLIM_INFINITY else min(cap, hard)


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
