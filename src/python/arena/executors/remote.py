"""The remote executor: REAPI Execute on a GPU pool, workers chosen by platform properties.

The action runs the same child, `python3 -m arena.harness.child`. Its input root holds job.json,
run/{task,baseline,candidate}/ (the harness's layout) and src/arena/ (the arena sources). REAPI
has no stdin, so a short shell command reads job.json into memory, deletes it (a candidate must
not find the result key on disk), puts the worker's absolute paths into it, and pipes it to the
child with descriptor 3 opened on result.frame, the action's one output file.

The result key is derived from the executor's secret and the job (HMAC), so the same job (the
same task, candidate, settings and secret seed) is the same action: a repeat is answered from the
action cache, and a result in that cache verifies only with the secret that made it.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment, with_environment
from arena.errors import ArenaError
from arena.executors.base import EXECUTOR_VERSION_KEY, ExecutorError
from arena.harness.job import (
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
from arena.reapi.cas import Cas, digest_of, serialize
from arena.reapi.channel import open_channel
from arena.task.task import Task

ROOT = "@ROOT@"  # stands for the worker's input root in job.json; replaced by the command
JOB_NAME = "job.json"
RESULT_NAME = "result.frame"
REMOTE_DIRS = {
    **{name: f"{ROOT}/run/{name}" for name in SHIPPED},
    **{name: f"{ROOT}/scratch/{name}" for name in SCRATCH},
}
# POSIX sh: refuse a root path that would break the JSON, make scratch, read and delete the job,
# then run the child with the job on stdin and its result on descriptor 3.
SCRIPT = f"""set -e
R=$PWD
case "$R" in *[\\"\\\\\\|\\&]*) echo "unusable input root path" >&2; exit 97;; esac
mkdir -p {" ".join(f"scratch/{d}" for d in SCRATCH)}
job=$(sed "s|{ROOT}|$R|g" {JOB_NAME})
rm -f {JOB_NAME}
test ! -e {JOB_NAME}
export PYTHONPATH="$R/src" HOME="$R/scratch/home" TMPDIR="$R/scratch/work"
export TRITON_CACHE_DIR="$R/scratch/triton"
cd "$R/scratch/work"
printf '%s' "$job" | python3 -m arena.harness.child 3>"$R/{RESULT_NAME}"
"""
DEFAULT_PATH = "/opt/venv/bin:/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GPU_PROPERTY = "arena-gpu"
IMAGE_PROPERTY = "container-image"


@dataclass(frozen=True)
class RemoteExecutor:
    endpoint: str  # host:port of the REAPI Execution service
    gpu: str  # the pool's GPU model, e.g. MI300X: platform property arena-gpu
    image: str = ""  # repository@sha256:digest the workers run the action in; property container-image
    instance: str = ""  # REAPI instance name
    cas_endpoint: str = ""  # CAS and action cache, when not at `endpoint`
    backend: str = "rocm"  # what the pool's GPUs run, recorded in the environment
    path: str = DEFAULT_PATH  # PATH of the action (finds python3 in the image)
    queue_timeout_s: float = 3600.0  # waiting for a free worker, on top of the harness's timeout
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    token: str = field(default="", repr=False)  # the pool's runner token (arena/pool/tokens.py)
    tls_ca: Path | None = None  # the CA of the pool's TLS certificate (None: plaintext)
    channels: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def run(self, task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings) -> HarnessResult:
        chosen, refused = screen_candidate(task, candidate, repo_root)
        if refused is not None:
            return refused
        unkeyed = new_job(task, replace(settings, device=0), REMOTE_DIRS, b"")
        key = hmac.new(self.secret, unkeyed.canonical_json(), hashlib.sha256).digest()
        job = replace(unkeyed, key=key.hex())
        import grpc

        cas = Cas(self._channel(self.cas_endpoint or self.endpoint), self.instance)
        with tempfile.TemporaryDirectory(prefix="arena-remote-") as tmp:
            (Path(tmp) / "run").mkdir()
            lay_out(task, chosen, repo_root, Path(tmp) / "run")
            files = input_files(Path(tmp) / "run", job.to_json())
        action_digest, blobs = self.action(files, settings)
        try:
            cas.upload(blobs)
            result = cas.get_action_result(action_digest) or self._execute(action_digest, settings)
        except grpc.RpcError as error:  # the pool's fault, not the candidate's
            raise ExecutorError(f"the REAPI pool at {self.endpoint} failed: {error.code().name}") from None
        if result is None:
            return failure("TIMEOUT", f"no result within {settings.timeout_s:g} s on the pool")
        return self._read(cas, result, key, task, settings)

    def action(self, files: dict[str, bytes], settings: HarnessSettings) -> tuple[Any, list[bytes]]:
        """The Action's digest and every blob it needs in the CAS (Action, Command, tree, files)."""
        pb = _pb()
        root, blobs = build_tree(files)
        platform = self.platform()
        env = {
            "PATH": self.path,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "PYTHONUNBUFFERED": "1",
        }
        if settings.backend == "cpu":
            env["TRITON_INTERPRET"] = "1"
        command = serialize(
            pb.Command(
                arguments=["/bin/sh", "-c", SCRIPT],
                environment_variables=[pb.Command.EnvironmentVariable(name=k, value=v) for k, v in sorted(env.items())],
                output_paths=[RESULT_NAME],
                platform=platform,
            )
        )
        action = pb.Action(command_digest=digest_of(command), input_root_digest=root, platform=platform)
        action.timeout.seconds = math.ceil(settings.timeout_s)
        action_bytes = serialize(action)
        return digest_of(action_bytes), [*blobs, command, action_bytes]

    def platform(self) -> Any:
        """The properties a worker must match: sorted by name, as REAPI requires."""
        pb = _pb()
        properties = {"OSFamily": "linux", GPU_PROPERTY: self.gpu}
        if self.image:
            properties[IMAGE_PROPERTY] = f"docker://{self.image}"
        return pb.Platform(properties=[pb.Platform.Property(name=k, value=v) for k, v in sorted(properties.items())])

    def _execute(self, action_digest: Any, settings: HarnessSettings) -> Any | None:
        """Execute and wait; the ActionResult, or None when the action ran out of time."""
        from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc

        pb = _pb()
        stub = remote_execution_pb2_grpc.ExecutionStub(self._channel(self.endpoint))
        request = pb.ExecuteRequest(instance_name=self.instance, action_digest=action_digest)
        last = None
        for operation in stub.Execute(request, timeout=settings.timeout_s + self.queue_timeout_s):
            last = operation
            if operation.done:
                break
        if last is None or not last.done:
            raise ExecutorError("the pool's Execute stream ended before the action finished")
        if last.HasField("error"):
            raise ExecutorError(f"the pool refused the action: {last.error.message}")
        response = pb.ExecuteResponse()
        last.response.Unpack(response)
        if response.status.code == 4:  # DEADLINE_EXCEEDED: the action's own timeout
            return None
        if response.status.code != 0:
            raise ExecutorError(f"the pool failed the action: {response.status.message}")
        return response.result

    def _read(self, cas: Cas, result: Any, key: bytes, task: Task, settings: HarnessSettings) -> HarnessResult:
        stdout = result.stdout_raw or (cas.download(result.stdout_digest) if result.stdout_digest.hash else b"")
        stderr = result.stderr_raw or (cas.download(result.stderr_digest) if result.stderr_digest.hash else b"")
        log = log_tail(stdout, stderr)
        frames = [f for f in result.output_files if f.path == RESULT_NAME and f.digest.size_bytes <= RESULT_LIMIT]
        frame = cas.download(frames[0].digest) if frames else b""
        return read_result(frame, key, log, task, settings)

    def check_access(self) -> str:
        """Ask the pool's action cache once for what a runner asks of it: ArenaError when the pool
        refuses this runner's token (at start, not at every job); else "" when it answered, or
        what kept it from answering (a pool that is down may come up later)."""
        import grpc

        endpoint = self.cas_endpoint or self.endpoint  # the first a job reaches
        try:
            Cas(self._channel(endpoint), self.instance).get_action_result(digest_of(b"may this runner use the pool?"))
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                raise ArenaError(
                    f"the pool at {endpoint} refused this runner ({error.code().name}): give --remote-token-file "
                    "(or ARENA_POOL_TOKEN) a runner's token made by `arena pool token --role runner`"
                ) from None
            return f"the pool at {endpoint} did not answer ({error.code().name})"
        return ""

    def _channel(self, endpoint: str) -> Any:
        if endpoint not in self.channels:
            self.channels[endpoint] = open_channel(endpoint, self.token, self.tls_ca)
        return self.channels[endpoint]

    def describe(self) -> dict[str, str]:
        return {
            "executor": "remote",
            "endpoint": self.endpoint,
            "instance": self.instance,
            "gpu": self.gpu,
            "image_digest": self.image.partition("@")[2],
        }

    def isolation(self) -> str:
        return f"remote pool {self.endpoint}"  # the candidate runs on another machine

    def environment(self, base: Environment) -> Environment:
        """The pool's GPU and image; nothing of this host (the child reports the worker's versions)."""
        return with_environment(
            Environment(),
            {EXECUTOR_VERSION_KEY: "remote"},
            backend=self.backend,
            gpu_name=self.gpu,
            image_digest=self.image.partition("@")[2],
        )


def _pb() -> Any:
    from arena.reapi.cas import reapi_protos

    return reapi_protos()[0]


def input_files(run: Path, job: bytes) -> dict[str, bytes]:
    """Every file of the input root by relative path: job.json, run/<shipped>/..., src/arena/..."""
    files = {JOB_NAME: job}
    for name in SHIPPED:
        for path in sorted((run / name).rglob("*")):
            if path.is_file():
                files[f"run/{path.relative_to(run).as_posix()}"] = path.read_bytes()
    for path in sorted(ARENA_ROOT.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[f"src/arena/{path.relative_to(ARENA_ROOT).as_posix()}"] = path.read_bytes()
    return files


def build_tree(files: dict[str, bytes]) -> tuple[Any, list[bytes]]:
    """The root Directory's digest and every blob (files and Directory messages) of the tree."""
    pb = _pb()
    tree: dict[str, Any] = {}
    for name, data in files.items():
        *folders, leaf = name.split("/")
        node = tree
        for folder in folders:
            node = node.setdefault(folder, {})
        node[leaf] = data
    blobs: list[bytes] = []

    def encode(node: dict[str, Any]) -> Any:
        directory = pb.Directory()
        for name in sorted(node):
            if isinstance(node[name], dict):
                directory.directories.add(name=name, digest=encode(node[name]))
            else:
                blobs.append(node[name])
                directory.files.add(name=name, digest=digest_of(node[name]))
        data = serialize(directory)
        blobs.append(data)
        return digest_of(data)

    return encode(tree), blobs
