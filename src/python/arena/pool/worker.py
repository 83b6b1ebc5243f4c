"""An arena GPU worker: a bot of the pool's scheduler, through the Remote Workers API.

One worker per GPU (one timing job per GPU at a time). It opens a bot session
(Bots.CreateBotSession) advertising the platform the remote executor's actions ask for
(OSFamily=linux, arena-gpu=<model>, and container-image when it runs inside that image), then
long-polls Bots.UpdateBotSession for a lease. A lease's payload is the REAPI Action: the worker
fetches its Command and input root from the server's CAS into a fresh folder, runs the command
there (arena/executors/remote.py's: the harness child, its job on stdin, its signed frame on
result.frame) with only the command's environment and this worker's GPU made visible, in its own
session and in bubblewrap as a local harness child (arena/pool/sandbox.py), killed at the
action's timeout; it uploads the output files, stdout and stderr to the
CAS and completes the lease with the ActionResult (the scheduler stores it in the action cache).

While the command runs, the worker keeps its session alive (UpdateBotSession with the lease
ACTIVE, well before the session's expire_time). A worker that dies stops doing so: after the
server's keepalive timeout the scheduler requeues its lease and another worker runs the job; a
worker restarted with the same bot id gets its old lease requeued at once. A worker told to stop
(SIGTERM, SIGINT) kills its command and hands the lease back (UNAVAILABLE, which the scheduler
retries elsewhere).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from arena.environment.probe import sandbox_tool
from arena.errors import ArenaError
from arena.limits.ipc import bound_ipc
from arena.limits.limits import Lifeline, Watch, confined, grouped, job_limits, wait_watched
from arena.pool.sandbox import isolation, sandboxed_command
from arena.reapi.cas import Cas, digest_of, reapi_protos
from arena.reapi.channel import open_channel
from arena.runner.run_folders import RUN_FOLDER_PREFIX, sweep_run_folders

OUTPUT_LIMIT = 256 << 20  # bytes of output files one action may return
LOG_LIMIT = 1 << 20  # the last bytes of stdout and of stderr kept
OK, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE = 0, 4, 13, 14  # google.rpc.Code
ENV = shutil.which("env") or "/usr/bin/env"  # coreutils: in the sandbox too (/usr, /bin)
WRAPPER_ENVIRONMENT = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
_DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def bots_protos() -> tuple[Any, Any, Any]:
    """(bots_pb2, its grpc stubs, worker_pb2) from buildgrid."""
    from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2, bots_pb2_grpc, worker_pb2

    return bots_pb2, bots_pb2_grpc, worker_pb2


@dataclass(frozen=True)
class WorkerSettings:
    server: str  # host:port of the pool server (Bots, CAS)
    gpu: str  # the GPU index this worker's commands see, or "cpu"
    gpu_name: str  # the platform property arena-gpu: the pool's GPU model, as the runner names it
    bot_id: str = ""  # stable across restarts; default <host>-gpu<N>
    instance: str = ""
    image: str = ""  # repository@sha256:...: advertise container-image (run the worker inside it)
    work: Path | None = None  # where input roots are laid out (default: the temporary folder)
    poll_s: float = 30.0  # long-poll for a lease
    max_timeout_s: float = 7200.0  # an action without a timeout, or with a longer one, stops here
    cpus: frozenset[int] | None = None  # its commands' CPUs (the GPU's own), None: any (limits/cpus.py)
    token: str = field(default="", repr=False)  # the pool's worker token (arena/pool/tokens.py)
    tls_ca: Path | None = None  # the CA of the server's TLS certificate (None: plaintext)

    @property
    def name(self) -> str:
        return self.bot_id or f"{socket.gethostname()}-gpu{self.gpu}"

    def properties(self) -> dict[str, str]:
        properties = {"OSFamily": "linux", "arena-gpu": self.gpu_name}
        if self.image:
            properties["container-image"] = f"docker://{self.image}"
        return properties

    def device_environment(self) -> dict[str, str]:
        """What shows the command its GPU (inside, device 0) and hides the others."""
        return {name: "" if self.gpu == "cpu" else self.gpu for name in _DEVICE_VARIABLES}


@dataclass
class Run:
    """One lease's command, run on a thread; `cancel` kills it."""

    lease_id: str
    action: Any
    status: tuple[int, str] = (INTERNAL, "not run")
    result: Any = None
    done: threading.Event = field(default_factory=threading.Event)
    process: subprocess.Popen[bytes] | None = None
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


class Stopped(Exception):
    """The worker was told to stop while it waited on the server."""


class SessionLost(Exception):
    """The server no longer knows this bot session (reaped, or replaced): open a new one."""


class Worker:
    def __init__(self, settings: WorkerSettings, log: Callable[[str], None] = print) -> None:
        self.settings = settings
        self.log = log
        self._channel = open_channel(settings.server, settings.token, settings.tls_ca)
        self._cas = Cas(self._channel, settings.instance)
        self._bots = bots_protos()[1].BotsStub(self._channel)
        self.leases_done = 0

    def close(self) -> None:
        self._channel.close()

    # The session.
    def _new_session(self) -> Any:
        bots_pb2, _, worker_pb2 = bots_protos()
        device = worker_pb2.Device(
            handle=f"gpu{self.settings.gpu}",
            properties=[
                worker_pb2.Device.Property(key=k, value=v) for k, v in sorted(self.settings.properties().items())
            ],
        )
        worker = worker_pb2.Worker(devices=[device], configs=[worker_pb2.Worker.Config(key="capacity", value="1")])
        return bots_pb2.BotSession(bot_id=self.settings.name, status=bots_pb2.OK, worker=worker)

    def _call(self, session: Any, timeout_s: float, stop: threading.Event | None = None) -> Any:
        """CreateBotSession (no name yet) or UpdateBotSession; SessionLost when the server
        refused the session, UNAVAILABLE-like errors waited out here; Stopped as soon as `stop`
        is set (a long poll in flight is cancelled)."""
        import grpc

        bots_pb2 = bots_protos()[0]
        pause = 0.5
        while True:
            if not session.name:
                request = bots_pb2.CreateBotSessionRequest(parent=self.settings.instance, bot_session=session)
                call = self._bots.CreateBotSession.future(request, timeout=timeout_s)
            else:
                request = bots_pb2.UpdateBotSessionRequest(name=session.name, bot_session=session)
                call = self._bots.UpdateBotSession.future(request, timeout=timeout_s)
            try:
                while True:
                    try:
                        return call.result(timeout=0.2)
                    except grpc.FutureTimeoutError:
                        if stop is not None and stop.is_set():
                            call.cancel()
                            raise Stopped() from None
            except grpc.RpcError as error:
                code = error.code()
                if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    timeout_s = max(timeout_s, 5.0)  # the server held the poll too long: ask again
                    continue
                if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNKNOWN):
                    self.log(f"the pool server did not answer ({code.name}); trying again in {pause:g} s")
                    if stop is not None and stop.wait(pause):
                        raise Stopped() from None
                    pause = min(pause * 2, 10.0)
                    continue
                if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    raise ArenaError(
                        f"the pool server at {self.settings.server} refused this worker ({code.name}): give it a "
                        "worker's token (--token-file, or ARENA_POOL_TOKEN) made by `arena pool token --role worker`"
                    ) from None
                raise SessionLost(f"{code.name}: {error.details()}") from None

    @staticmethod
    def _heartbeat_s(session: Any) -> float:
        """A third of the time the server gives the session before it counts the bot dead."""
        if not session.HasField("expire_time"):
            return 5.0
        left = session.expire_time.ToDatetime(tzinfo=timezone.utc) - datetime.now(timezone.utc)
        return min(10.0, max(0.2, left.total_seconds() / 3))

    # The loop.
    def first_line(self) -> str:
        """What this worker is: its server, GPU, platform and how its commands are kept apart."""
        properties = " ".join(f"{k}={v}" for k, v in sorted(self.settings.properties().items()))
        where = f"arena pool worker {self.settings.name} on {self.settings.server}"
        return f"{where}: gpu {self.settings.gpu}, {properties}, commands in {isolation()}"

    def serve(self, stop: threading.Event) -> None:
        """Take leases until `stop` is set; the running one is then handed back."""
        bots_pb2 = bots_protos()[0]
        self.log(self.first_line())
        left = sweep_run_folders(self.settings.work)  # a killed worker's lease folders (input roots)
        if left:
            self.log(f"removed {len(left)} lease folder(s) that workers killed mid-lease left")
        session, run = None, None
        while not stop.is_set():
            try:
                if session is None:
                    session = self._call(self._new_session(), self.settings.poll_s, stop)
                    self.log(f"bot session {session.name}")
                    continue
                if run is None:
                    lease = next(
                        (lease for lease in session.leases if lease.state in (bots_pb2.PENDING, bots_pb2.ACTIVE)), None
                    )
                    if lease is None:
                        session = self._call(session, self.settings.poll_s, stop)
                        continue
                    lease.state = bots_pb2.ACTIVE
                    run = self._start(lease)
                    continue
                run.done.wait(self._heartbeat_s(session))
                lease = next((lease for lease in session.leases if lease.id == run.lease_id), None)
                if lease is None or lease.state == bots_pb2.CANCELLED:
                    run.cancel()
                    self.log(f"lease {run.lease_id} cancelled by the server")
                    run = None
                    continue
                if run.done.is_set():
                    self._complete(lease, run)
                    run = None
                session = self._call(session, self.settings.poll_s if run is None else 10.0, stop)
            except Stopped:
                break
            except SessionLost as lost:
                self.log(f"bot session lost ({lost}); opening a new one")
                if run is not None:
                    run.cancel()  # the server has requeued its lease
                    run = None
                session = None
                stop.wait(1.0)
        if session is None:
            return
        if run is not None:  # hand the lease back: the scheduler runs it elsewhere at once
            run.cancel()
            run.done.wait(10.0)
            lease = next((lease for lease in session.leases if lease.id == run.lease_id), None)
            if lease is not None:
                run.status, run.result = (UNAVAILABLE, "the worker stopped"), reapi_protos()[0].ActionResult()
                self._complete(lease, run)
        if any(lease.state == bots_pb2.COMPLETED for lease in session.leases):  # not yet delivered
            deadline = threading.Event()
            timer = threading.Timer(10.0, deadline.set)
            timer.start()
            with contextlib.suppress(SessionLost, Stopped):
                self._call(session, 10.0, deadline)
            timer.cancel()

    def _start(self, lease: Any) -> Run:
        pb = reapi_protos()[0]
        action = pb.Action()
        if lease.payload.Is(pb.Action.DESCRIPTOR):
            lease.payload.Unpack(action)
        else:
            digest = pb.Digest()
            lease.payload.Unpack(digest)
            action = pb.Action.FromString(self._cas.download(digest))
        run = Run(lease.id, action)
        self.log(f"lease {lease.id} started")
        threading.Thread(target=self._execute, args=(run,), name=f"lease-{lease.id}", daemon=True).start()
        return run

    def _complete(self, lease: Any, run: Run) -> None:
        bots_pb2 = bots_protos()[0]
        lease.state = bots_pb2.COMPLETED
        lease.status.code, lease.status.message = run.status
        lease.result.Pack(run.result)
        self.leases_done += 1
        code = run.status[0]
        self.log(
            f"lease {lease.id} done: status {code}{' ' + run.status[1] if code else ''}, exit {run.result.exit_code}"
        )

    # One action.
    def _execute(self, run: Run) -> None:
        pb = reapi_protos()[0]
        metadata = pb.ExecutedActionMetadata(worker=self.settings.name)
        metadata.worker_start_timestamp.GetCurrentTime()
        # This worker's pid in the name: the next worker on this folder sweeps a killed one's (serve).
        root = Path(tempfile.mkdtemp(prefix=f"{RUN_FOLDER_PREFIX}{os.getpid()}-", dir=self.settings.work))
        try:
            command = pb.Command.FromString(self._cas.download(run.action.command_digest))
            metadata.input_fetch_start_timestamp.GetCurrentTime()
            inputs = root / "root"
            materialize(self._cas, run.action.input_root_digest, inputs)
            metadata.input_fetch_completed_timestamp.GetCurrentTime()
            outputs = list(command.output_paths) or [*command.output_files, *command.output_directories]
            for name in outputs:
                make_parents(inputs, name)
            limit = run.action.timeout.seconds + run.action.timeout.nanos / 1e9
            limit = min(limit or self.settings.max_timeout_s, self.settings.max_timeout_s)
            metadata.execution_start_timestamp.GetCurrentTime()
            exit_code, timed_out = self._run_command(run, command, inputs, root, limit)
            metadata.execution_completed_timestamp.GetCurrentTime()
            metadata.output_upload_start_timestamp.GetCurrentTime()
            result = self._upload(command, outputs, inputs, root, exit_code)
            metadata.output_upload_completed_timestamp.GetCurrentTime()
            metadata.worker_completed_timestamp.GetCurrentTime()
            result.execution_metadata.CopyFrom(metadata)
            run.result = result
            run.status = (
                (DEADLINE_EXCEEDED, f"the action ran past its timeout of {limit:g} s") if timed_out else (OK, "")
            )
        except Exception as error:  # the worker's or the pool's fault, never the action's: retried elsewhere
            run.result = pb.ActionResult()
            run.status = (INTERNAL, f"worker {self.settings.name}: {type(error).__name__}: {error}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
            run.done.set()

    def _run_command(self, run: Run, command: Any, inputs: Path, root: Path, limit: float) -> tuple[int, bool]:
        environment = {v.name: v.value for v in command.environment_variables}
        environment.update(self.settings.device_environment())
        limits = job_limits()
        start = inputs / safe_path(command.working_directory) if command.working_directory else inputs
        # No preexec_fn: this process runs gRPC threads, and a child forked from it could stop
        # in gRPC's fork handlers before exec; without one the child is started by vfork.
        with (
            grouped(limits, self.settings.cpus) as group,  # the kernel's bounds, where the host allows
            Lifeline() as lifeline,  # the command's namespace ends when this worker does
            _isolated(
                _in_environment(list(command.arguments), environment), inputs, start, environment, lifeline
            ) as isolated,
            (root / "stdout").open("wb") as out,
            (root / "stderr").open("wb") as err,
        ):
            # The kernel's backstop (arena.limits), and the worker's CPUs kept from its first instruction.
            argv = confined(isolated, limits, self.settings.cpus, group)
            # The wrappers die with this worker at once; the namespace's processes by its lifeline
            # (limits.Lifeline), which has no window while they start.
            if shutil.which("setpriv"):
                argv = ["setpriv", "--pdeathsig", "KILL", "--", *argv]
            process = subprocess.Popen(
                argv,
                cwd=start,
                env=WRAPPER_ENVIRONMENT,  # the action's is set only around its command (_in_environment)
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its own process group: killed whole at the deadline
                pass_fds=(lifeline.fd,),
            )
            lifeline.handed_over()
            run.process = process
            if run.cancelled:
                run.cancel()
            # Read from outside while it runs, its lease folder with it (the job's scratch), and
            # the shared memory of its own IPC namespace bounded as soon as unshare has made it.
            watch = Watch(process.pid, [root], limits, self.settings.cpus, group)
            if isolated[0] != ENV:  # an IPC namespace of its own (bubblewrap's or unshare's)
                bound_ipc(process.pid, limits.memory)
            code = wait_watched(process, time.monotonic() + limit, watch)
            watch.settle()  # with what its group's limits did
            timed_out = code is None and not watch.breached
            code = -signal.SIGKILL if code is None else code  # killed next
            if watch.breached:  # said where the job's log is read (the remote executor's failure)
                err.write(f"\narena pool worker {self.settings.name}: stopped: the command {watch.breached}\n".encode())
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # what the command left running
            process.wait()
            lifeline.close()  # and what its namespace still holds, before its user is given back
        return code, timed_out

    def _upload(self, command: Any, outputs: list[str], inputs: Path, root: Path, exit_code: int) -> Any:
        pb = reapi_protos()[0]
        blobs: list[bytes] = []
        files = []
        total = 0
        for name in outputs:
            path = inputs / safe_path(name)
            # Only regular files inside the input root: a link could point anywhere on this machine.
            if path.is_symlink() or not path.is_file() or inputs.resolve() not in path.resolve().parents:
                continue
            data = path.read_bytes()
            total += len(data)
            if total > OUTPUT_LIMIT:
                break
            blobs.append(data)
            files.append(pb.OutputFile(path=name, digest=digest_of(data), is_executable=os.access(path, os.X_OK)))
        stdout = _tail(root / "stdout")
        stderr = _tail(root / "stderr")
        self._cas.upload([*blobs, stdout, stderr])
        return pb.ActionResult(
            output_files=files,
            exit_code=exit_code,
            stdout_digest=digest_of(stdout),
            stderr_digest=digest_of(stderr),
        )


def _in_environment(argv: list[str], environment: dict[str, str]) -> list[str]:
    """`argv` started by env(1) with `environment` alone. Only the command gets the action's
    variables: the wrappers before it (setpriv, confine.py, bubblewrap or unshare) run as the
    worker's user, root on a GPU machine, and an action's LD_PRELOAD=./lib.so, a library it ships
    in its input root (their working folder), ran there as root outside any sandbox. ValueError
    for what env(1) would read otherwise (a name with "=", a program with "=")."""
    if not argv or "=" in argv[0] or any(not name or "=" in name for name in environment):
        raise ValueError("the action's command or environment cannot be passed through env(1)")
    return [ENV, "-i", *(f"{name}={value}" for name, value in sorted(environment.items())), *argv]


@contextlib.contextmanager
def _isolated(
    argv: list[str], inputs: Path, start: Path, environment: dict[str, str], lifeline: Lifeline
) -> Iterator[list[str]]:
    """`argv` in bubblewrap where this host offers it (arena.pool.sandbox), else in unshare's
    namespaces (pid_namespace), else as it is; in a namespace, started by the `lifeline`'s end."""
    if sandbox_tool():
        with sandboxed_command(argv, inputs, start, environment, lifeline) as sandboxed:
            yield sandboxed
    else:
        namespace = list(pid_namespace())
        yield [*namespace, *lifeline.prefix(sys.executable), *argv] if namespace else argv


@functools.lru_cache(maxsize=1)
def pid_namespace() -> tuple[str, ...]:
    """The prefix that runs a command as the first process of a PID namespace of its own, so that
    when it ends (its lifeline broken: this worker gone) the kernel kills everything it started, and in network,
    IPC and UTS namespaces of its own (no network: a candidate reaches neither the pool's server
    nor anything else); () where util-linux's unshare cannot make
    them here."""
    prefix = ["unshare", "--pid", "--net", "--ipc", "--uts", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        prefix[1:1] = ["--user", "--map-current-user"]  # an unprivileged user needs a user namespace for it
    prefix.append("--")
    try:
        works = subprocess.run([*prefix, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    return tuple(prefix) if works else ()


def _tail(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - LOG_LIMIT))
        return handle.read()


def safe_path(name: str) -> str:
    """A relative path inside the input root, or ValueError (REAPI paths never climb out)."""
    parts = name.split("/")
    if name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"not a path inside the input root: {name!r}")
    return name


def make_parents(root: Path, name: str) -> None:
    """The folders above the output `name` inside `root`, made where missing; ValueError where
    one is a link (made through it, as the worker's user, they would land where it points)."""
    folder = root
    for part in safe_path(name).split("/")[:-1]:
        folder = folder / part
        if folder.is_symlink():
            raise ValueError(f"the output {name!r} lies below a link of the input root")
        if not folder.is_dir():
            folder.mkdir()


def materialize(cas: Cas, digest: Any, folder: Path) -> None:
    """The Directory tree `digest` as files under `folder` (made here), fetched level by level in
    batches. Every folder and file is made new, never through what exists: a tree that names one
    entry twice (a link and a file or folder of the same name: written as root, the file went
    where the link pointed, anywhere on this machine) is refused (ValueError)."""
    pb = reapi_protos()[0]
    pending = [(digest, folder)]
    files: list[tuple[Path, Any]] = []
    while pending:
        blobs = cas.download_many(d for d, _ in pending)
        deeper = []
        for tree, path in pending:
            path.mkdir(parents=path == folder, exist_ok=path == folder)  # a sub-folder is new
            directory = pb.Directory.FromString(blobs[tree.hash])
            names = [*(n.name for n in directory.files), *(n.name for n in directory.directories)]
            names += [n.name for n in directory.symlinks]
            if len(set(names)) != len(names):
                raise ValueError(f"a folder of the input root names an entry twice: {sorted(names)!r}")
            for node in directory.files:
                files.append((path / safe_path(node.name), node))
            for sub in directory.directories:
                deeper.append((sub.digest, path / safe_path(sub.name)))
            for link in directory.symlinks:
                (path / safe_path(link.name)).symlink_to(link.target)
        pending = deeper
    data = cas.download_many(node.digest for _, node in files)
    for path, node in files:
        mode = 0o755 if node.is_executable else 0o644
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with os.fdopen(handle, "wb") as out:
            out.write(data[node.digest.hash])
        os.chmod(path, mode, follow_symlinks=False)  # the mode asked for, whatever the umask


def gpu_name(gpu: str) -> str:
    """The model of GPU `gpu` as nvidia-smi or rocm-smi names it ("cpu" for the CPU), or ""."""
    if gpu == "cpu":
        return "cpu"
    for argv in (
        ["nvidia-smi", "-i", gpu, "--query-gpu=name", "--format=csv,noheader"],
        ["rocm-smi", "-d", gpu, "--showproductname", "--csv"],
    ):
        try:
            text = subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if argv[0] == "nvidia-smi" and lines:
            return lines[0]
        if argv[0] == "rocm-smi" and len(lines) > 1:
            header, row = lines[0].split(","), lines[1].split(",")
            for column in ("Card Series", "Card series"):
                if column in header:
                    return row[header.index(column)].strip()
    return ""
