"""The parent side: run one candidate in a fresh child process and read back its signed result.

The parent owns time and output. It checks the candidate's source statically, lays out the
task, baseline and candidate in the child's fresh temporary folder, hands the child its job on
stdin (with a per-run HMAC key and the secret seed), drains its stdout/stderr into bounded tails,
and kills the whole group at the deadline. The only result it believes is one frame on the result
pipe signed with that run's key; it parses it with HarnessResult.from_json and never unpickles
anything.

A child may be started before its job is known (a Standby): it imports torch and waits on stdin,
so an evaluation does not pay for the import. It is still used for exactly one job.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import selectors
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from arena.candidate.candidate import Candidate
from arena.environment.measurement import Measurement, current_measurement
from arena.environment.probe import child_users, sandbox_tool
from arena.environment.users import ChildUser, Lease, lease
from arena.harness.bytecode import bytecode_folder
from arena.harness.channel import ChannelError, open_frame
from arena.harness.job import (
    FOLDERS,
    LOG_TAIL,
    RESULT_LIMIT,
    SETUP_FAILED,
    Job,
    check_case_names,
    failure,
    lay_out,
    log_tail,
    make_folders,
    new_job,
    screen_candidate,
    select_cases,
    split_marks,
    without_result,
)
from arena.harness.kernel_cache import MANAGER, TRUSTED_VARIABLE, promote, trusted_root
from arena.harness.result import HarnessResult
from arena.harness.sandbox import SCRATCH_MOUNTS, hand_over, read_only_folders, refuse_exposed, sandboxed
from arena.harness.settings import HarnessSettings
from arena.harness.trusted_builds import promote as promote_builds
from arena.harness.version import trusted_digest
from arena.limits.cgroups import Group
from arena.limits.cpus import pin
from arena.limits.ipc import bound_ipc
from arena.limits.limits import JOB_VARIABLE, Lifeline, Watch, confined, group_for, job_limits
from arena.limits.usage import process_tree
from arena.task.task import Task

_PASS_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "CUDA_HOME",
    "CUDA_PATH",
    "ROCM_PATH",
    "HIP_PATH",
    "HIP_PLATFORM",
    "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    JOB_VARIABLE,  # the child's backstop follows the operator's limits (arena.limits)
)


def run_harness(
    task: Task,
    candidate: Candidate | None,
    repo_root: Path,
    settings: HarnessSettings,
    standby: Standby | None = None,
    cpus: frozenset[int] | None = None,
) -> HarnessResult:
    """Compile, check and time `candidate` (None: the baseline, a no-op) in a fresh process,
    the one `standby` has ready when given, else one started now; only the cases settings.cases
    names, when it names any (a ValueError for one the task lacks: job.new_job). `cpus`: its
    lane's CPUs, which the child is kept to (limits/cpus.py; None: wherever this process may run)."""
    select_cases(task, settings)  # an unknown case refused before a child is taken
    chosen, refused = screen_candidate(task, candidate, repo_root)
    if refused is not None:
        return refused
    child = standby.take(cpus) if standby is not None else Child(hidden=(repo_root,), cpus=cpus)
    try:
        refuse_exposed(child.shown, hidden=(repo_root,))  # a child started ahead: before its job
        lay_out(task, chosen, repo_root, child.work)
        hand_over(child.work, child.user)
        key = secrets.token_bytes(32)
        dirs = {name: str(child.work / name) for name in FOLDERS}
        job = new_job(task, settings, dirs, key, child.result_fd_in_child)
        result = child.run(job, settings.timeout_s, cpus)
        if candidate is None and result.status in ("PASSED", "NEEDS_DEVICE"):
            # Only trusted code ran (the baseline as its own candidate): its kernels and its HIP
            # build may be reused.
            promote(child.work / "triton", trusted_root())
            promote_builds(child.work / "work", trusted_root())
    finally:
        child.close()
    if trusted_digest() != child.trusted_digest:
        return failure("CHEAT_DETECTED", "the harness's own source files changed during the run")
    return check_case_names(result, task, settings)


class Child:
    """One started `python -m arena.harness.child`, in its own session and temporary folder,
    waiting for its job on stdin. Used for one job, then closed."""

    def __init__(self, hidden: tuple[Path, ...] = (), cpus: frozenset[int] | None = None) -> None:
        """`hidden`: folders the child must not be shown (the repository the tasks come from).
        `cpus`: its lane's, from its start (its `import torch` does not run on other lanes' CPUs)."""
        # The parent's pid in the name: a runner started later sweeps the folders of dead parents
        # (arena.runner.run_folders) and leaves a live one's alone.
        self._folder = tempfile.TemporaryDirectory(prefix=f"arena-run-{os.getpid()}-")
        self.work = Path(self._folder.name)
        make_folders(self.work)
        self.trusted_digest = trusted_digest()  # the sources this child imports
        self.result_fd, write_fd = os.pipe()
        self.result_fd_in_child = write_fd  # pass_fds keeps the number
        measurement = current_measurement()  # the interpreter children run under, and its import path
        argv = [measurement.python, "-m", "arena.harness.child"]
        self.sandbox = sandbox_tool()  # "" where this machine offers none (recorded in the environment)
        self.kernels = trusted_root()  # compiled trusted kernels, read-only to the child
        self.lease: Lease | None = None  # its user's, under a root runner (users.py)
        self.user: ChildUser | None = None  # whom the child runs as (None: as we do)
        self.shown: tuple[str, ...] = ()  # the folders the child sees read-only
        # Compiled once by this trusted parent where the environment ships no byte code (bytecode.py).
        self.bytecode = bytecode_folder(measurement)
        self.group: Group | None = None  # its control group (arena.limits.cgroups), where the host allows one
        self.lifeline = Lifeline()  # its sandbox ends with this process, even while bubblewrap starts
        try:
            if self.sandbox:
                argv = self._sandboxed(argv, measurement, hidden)
            # Started through confine.py: the kernel's backstop, its control group where the host
            # allows one, and the lane's CPUs, from the first instruction of bubblewrap on (its
            # import of torch runs on no other lane's CPUs).
            self.limits = job_limits()  # read once: its group, its backstop and its watch agree
            self.group = group_for(self.limits, cpus)
            argv = confined(argv, self.limits, cpus, self.group)
            self.cpus = cpus
        except BaseException:
            os.close(self.result_fd)
            os.close(write_fd)
            self.lifeline.close()
            self._remove()
            raise
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd, self.lifeline.fd) if self.sandbox else (write_fd,),
                start_new_session=True,
                cwd=self.work / "work",
                env=_child_env(
                    self.work, measurement, sandboxed=bool(self.sandbox), kernels=self.kernels, bytecode=self.bytecode
                ),
            )
        except BaseException:
            os.close(self.result_fd)
            self.lifeline.close()
            self._remove()
            raise
        finally:
            os.close(write_fd)  # the child holds the only write end now
        self.lifeline.handed_over()
        self._closed = False

    def _sandboxed(self, argv: list[str], measurement: Measurement, hidden: tuple[Path, ...]) -> list[str]:
        """`argv` in bubblewrap (sandbox.py), as a user of its own under a root runner: a uid no
        other running sandbox has, so the kernel's per-user counts are its own (users.py)."""
        users = child_users()
        if users is not None:
            self.lease = lease(users)
            self.user = self.lease.user
        make_folders(self.work, tuple(SCRATCH_MOUNTS))  # its /tmp
        shown = (self.kernels, *map(Path, measurement.folders), *([self.bytecode] if self.bytecode else []))
        first = self.lifeline.prefix(measurement.python)
        sandboxed_argv = sandboxed(argv, self.work, read_only=shown, user=self.user, hidden=hidden, first_process=first)
        self.shown = tuple(read_only_folders(tuple(map(str, shown))))
        hand_over(self.work, self.user)
        return sandboxed_argv

    def ready(self) -> bool:
        """Still waiting for a job, and started from the harness sources on disk now."""
        return self.process.poll() is None and self.trusted_digest == trusted_digest()

    def run(self, job: Job, timeout_s: float, cpus: frozenset[int] | None = None) -> HarnessResult:
        """Hand over `job`, wait for the result signed with its key until `timeout_s` from now;
        the child kept to `cpus` (its lane's) when given."""
        assert self.process.stdin is not None
        limits = self.limits
        if self.sandbox:  # its IPC namespace's shared memory too, before any candidate code (limits/ipc.py)
            bound_ipc(self.process.pid, limits.memory)
        if cpus is not None and cpus != self.cpus:  # started for no lane (or another): every thread now
            if self.group is not None:
                self.group.keep_to(cpus)
            pin(process_tree(self.process.pid), cpus)
        try:
            self.process.stdin.write(job.to_json())
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        # Read from outside while it runs: its processes, their memory, and its job folder on disk
        # (its /tmp is a folder there when sandboxed; its /dev/shm a bounded tmpfs: sandbox.py).
        watch = Watch(self.process.pid, [self.work], limits, cpus, self.group)
        streams, timed_out = _drain(self.process, self.result_fd, time.monotonic() + timeout_s, watch)
        watch.settle()  # what its group's limits did since the last reading
        log = log_tail(bytes(streams["stdout"]), bytes(streams["stderr"]))
        if timed_out:
            return failure("TIMEOUT", f"no result within {timeout_s:g} s; the process group was killed", log)
        marks, frame = split_marks(bytes(streams["result"]))
        if watch.breached:  # stopped by the parent: whatever frame came is not the whole run's
            return without_result(f"was stopped: its sandbox {watch.breached},", marks, log)
        if not frame:
            return without_result(_describe_exit(self.process.returncode, bool(self.sandbox)), marks, log)
        try:
            return HarnessResult.from_json(open_frame(job.key_bytes, frame))
        except ChannelError as error:
            return failure("CHEAT_DETECTED", f"result channel tampered with: {error}", log)
        except (ValueError, KeyError, TypeError) as error:
            return failure("CHEAT_DETECTED", f"signed result does not parse: {type(error).__name__}", log)

    def close(self) -> None:
        """Kill the child's whole group, close the pipes, delete the folder (idempotent)."""
        if self._closed:
            return
        self._closed = True
        _kill_group(self.process)
        self.process.wait()
        self.lifeline.close()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        os.close(self.result_fd)
        self._remove()

    def _remove(self) -> None:
        """Its folder, its control group and its user (the child has ended: close(), or it never
        started): the user last, once the group has killed what of the sandbox was left."""
        self._folder.cleanup()
        if self.group is not None:
            self.group.close()
        if self.lease is not None:
            self.lease.release()


class Standby:
    """Keeps one Child started ahead of the next job. take() returns it (or a new one when it
    died or the harness sources changed since it started) and starts the next at once, so its
    `import torch` overlaps the job in hand.

    Use one Standby from one long-lived thread: Linux delivers a child's parent-death signal
    when the thread that started it exits (the child asks for it), and that would kill a
    child started on a short-lived thread.

    `again=False`: one child only, for a command that runs one job (`arena evaluate` starts it
    before it reads the task, probes the machine and computes the key).
    """

    def __init__(self, again: bool = True) -> None:
        self._next: Child | None = None
        self._again = again

    def warm(self, cpus: frozenset[int] | None = None) -> None:
        """Start the waiting child now, if none is waiting (a lane about to take jobs), on `cpus`."""
        if self._next is None:
            self._next = Child(cpus=cpus)

    def take(self, cpus: frozenset[int] | None = None) -> Child:
        """The waiting child (or a new one), and the next started on `cpus`, the lane's."""
        child, self._next = self._next, None
        if child is None or not child.ready():
            if child is not None:
                child.close()
            child = Child(cpus=cpus)
        if self._again:
            self._next = Child(cpus=cpus)
        return child

    def close(self) -> None:
        if self._next is not None:
            self._next.close()
            self._next = None


SANDBOXED_VARIABLE = "ARENA_SANDBOXED"


def _child_env(
    work: Path,
    measurement: Measurement,
    sandboxed: bool = False,
    kernels: Path | None = None,
    bytecode: Path | None = None,
) -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    # `python` and `python3` in a build or bench command are the harness's own interpreter (a
    # version manager's shims on the host PATH are not inside the sandbox).
    tools = work / "home" / "bin"
    tools.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        if not (tools / name).exists():
            (tools / name).symlink_to(measurement.python)
    env["PATH"] = os.pathsep.join(p for p in (str(tools), env.get("PATH", "")) if p)
    env.update(
        # Absolute: the child runs in the work folder, and test runners put relative entries here.
        PYTHONPATH=os.pathsep.join(measurement.path),
        HOME=str(work / "home"),
        TMPDIR=str(work / "work"),
        TRITON_CACHE_DIR=str(work / "triton"),
        # No byte code written by the harness's interpreters, but the installed packages' own is
        # read, or, where they ship none, the parent's compile of them (bytecode.py): with
        # PYTHONPYCACHEPREFIX on an empty folder every child and worker compiled torch and triton
        # from source (4.3 s a process instead of 2.1 on a 2-core machine). A build's byte code
        # goes to scratch through the build's own environment (backends/repository.py).
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONNOUSERSITE="1",
        PYTHONUNBUFFERED="1",
        # Not the working folder first on the import path (`-m` puts it there): the job's scratch.
        PYTHONSAFEPATH="1",
        # No compiled-kernel caches under HOME, which candidate code writes: torch's NVRTC kernels,
        # the CUDA driver's JIT cache, ROCm's code-object cache (a kernel planted there would be
        # loaded by the judge as its own; docs/harness.md, cheat 36).
        USE_PYTORCH_KERNEL_CACHE="0",
        CUDA_CACHE_DISABLE="1",
        AMD_COMGR_CACHE="0",
    )
    if bytecode is not None:  # the parent's compile of the environment's imports, read-only here
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    if sandboxed:
        env[SANDBOXED_VARIABLE] = "1"  # the child then reports processes left in its PID namespace
    if kernels is not None:
        env.update({TRUSTED_VARIABLE: str(kernels), "TRITON_CACHE_MANAGER": MANAGER})
    return env


def _drain(
    child: subprocess.Popen[bytes], result_fd: int, deadline: float, watch: Watch | None = None
) -> tuple[dict[str, bytearray], bool]:
    """Read stdout, stderr (keeping tails) and the result pipe until all close; kill at the deadline,
    or at the watch's first breach of the limits. Once the child has exited, its whole group is
    killed so no grandchild can hold a pipe open."""
    assert child.stdout is not None and child.stderr is not None
    names = {child.stdout.fileno(): "stdout", child.stderr.fileno(): "stderr", result_fd: "result"}
    out = {name: bytearray() for name in names.values()}
    selector = selectors.DefaultSelector()
    for fd in names:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    timed_out, exited_at = False, None
    while selector.get_map():
        now = time.monotonic()
        if now >= deadline:
            timed_out = True
            break
        if exited_at is None and child.poll() is not None:
            exited_at = now
            _kill_group(child)
        if exited_at is not None and now - exited_at > 5:
            break
        if watch is not None and exited_at is None and watch.check():
            break
        for key, _ in selector.select(timeout=min(deadline - now, 0.2)):
            data = os.read(key.fd, 1 << 16)
            if not data:
                selector.unregister(key.fd)
                continue
            buffer = out[names[key.fd]]
            buffer += data
            limit = RESULT_LIMIT if names[key.fd] == "result" else LOG_TAIL
            if len(buffer) > limit:
                del buffer[: len(buffer) - limit]
    selector.close()
    stopped = watch is not None and bool(watch.breached)
    if not timed_out and not stopped:  # every pipe closed: the child may still be running (and looping)
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    _kill_group(child)
    child.wait()
    return out, timed_out


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


def _describe_exit(code: int | None, sandboxed: bool = False) -> str:
    """How the child ended; in the sandbox, bubblewrap exits 128 + N when the child dies of signal N."""
    if code is not None and sandboxed and 128 < code < 128 + 65:
        code = -(code - 128)
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    if code == SETUP_FAILED:
        return "failed in the judge's own setup, before any candidate code,"
    return f"exited with code {code}"
