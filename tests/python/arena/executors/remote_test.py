"""The remote executor against a real BuildGrid CAS and action cache on loopback, with a test
worker behind a loopback Execution service: it fetches the action's input root from the CAS,
runs the action's command as a pool worker would, and records the ActionResult."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent import futures
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.candidate.candidate import Candidate
from arena.harness.settings import HarnessSettings
from arena.task.task import Task

SETTINGS = HarnessSettings(backend="cpu", timeout_s=240, cases=("small",), secret_seed=7)
IMAGE = "rocm/pytorch@sha256:" + "cd" * 32


def materialize(cas: Any, digest: Any, folder: Path) -> None:
    from arena.reapi.cas import reapi_protos

    directory = reapi_protos()[0].Directory.FromString(cas.download(digest))
    folder.mkdir(parents=True, exist_ok=True)
    for node in directory.files:
        (folder / node.name).write_bytes(cas.download(node.digest))
    for node in directory.directories:
        materialize(cas, node.digest, folder / node.name)


class Worker:
    """Execution.Execute, served on 127.0.0.1: runs each action here, like one pool worker."""

    def __init__(self, cas_endpoint: str) -> None:
        self.cas_endpoint = cas_endpoint
        self.actions: list[Any] = []
        self.job_left_behind: list[bool] = []

    def Execute(self, request: Any, context: Any) -> Iterator[Any]:
        import grpc
        from buildgrid._protos.google.longrunning import operations_pb2

        from arena.reapi.cas import Cas, digest_of, reapi_protos

        pb = reapi_protos()[0]
        with grpc.insecure_channel(self.cas_endpoint) as channel:
            cas = Cas(channel, request.instance_name)
            action = pb.Action.FromString(cas.download(request.action_digest))
            command = pb.Command.FromString(cas.download(action.command_digest))
            self.actions.append(action)
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                materialize(cas, action.input_root_digest, root)
                env = {v.name: v.value for v in command.environment_variables}
                done = subprocess.run(
                    list(command.arguments),
                    cwd=root,
                    env=env,
                    capture_output=True,
                    timeout=action.timeout.seconds,
                )
                self.job_left_behind.append((root / "job.json").exists())
                outputs = []
                for name in command.output_paths:
                    if (root / name).is_file():
                        data = (root / name).read_bytes()
                        cas.upload([data])
                        outputs.append(pb.OutputFile(path=name, digest=digest_of(data)))
            result = pb.ActionResult(
                output_files=outputs,
                exit_code=done.returncode,
                stdout_raw=done.stdout[-4096:],
                stderr_raw=done.stderr[-4096:],
            )
            cas.update_action_result(request.action_digest, result)
        operation = operations_pb2.Operation(name="op", done=True)
        operation.response.Pack(pb.ExecuteResponse(result=result))
        yield operation


@pytest.fixture
def pool(buildgrid: str) -> Iterator[tuple[str, Worker]]:
    import grpc
    from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc

    worker = Worker(buildgrid)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = type("Servicer", (remote_execution_pb2_grpc.ExecutionServicer,), {"Execute": worker.Execute})()
    remote_execution_pb2_grpc.add_ExecutionServicer_to_server(handler, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", worker
    finally:
        server.stop(grace=None)


def executor(endpoint: str, buildgrid: str) -> Any:
    from arena.executors.remote import RemoteExecutor

    # The worker here finds python3 next to this interpreter (in a pool: in the image).
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    return RemoteExecutor(endpoint, "MI300X", IMAGE, instance="arena", cas_endpoint=buildgrid, path=path)


def test_a_job_runs_on_the_pool_and_a_repeat_comes_from_the_action_cache(
    pool: tuple[str, Worker], buildgrid: str, scale_repo: Path, scale_task: Task
) -> None:
    endpoint, worker = pool
    remote = executor(endpoint, buildgrid)
    first = remote.run(scale_task, None, scale_repo, SETTINGS)
    assert first.status == "PASSED" and first.correct, first.errors
    assert {"small", "small~hidden0"} <= {case.name for case in first.cases}
    assert worker.job_left_behind == [False]  # the key never sat on the worker's disk during the run
    again = remote.run(scale_task, None, scale_repo, SETTINGS)
    assert again == first and len(worker.actions) == 1  # answered by the action cache


def test_the_action_selects_the_pool_by_gpu_and_image(
    pool: tuple[str, Worker], buildgrid: str, scale_repo: Path, scale_task: Task, wrong_candidate: Candidate
) -> None:
    endpoint, worker = pool
    result = executor(endpoint, buildgrid).run(scale_task, wrong_candidate, scale_repo, SETTINGS)
    assert result.status == "INCORRECT" and result.compiled and not result.correct
    properties = {p.name: p.value for p in worker.actions[0].platform.properties}
    assert properties == {"OSFamily": "linux", "arena-gpu": "MI300X", "container-image": f"docker://{IMAGE}"}
    assert worker.actions[0].timeout.seconds == 240


def test_another_secret_does_not_trust_a_cached_result(
    pool: tuple[str, Worker], buildgrid: str, scale_repo: Path, scale_task: Task
) -> None:
    """A result in the shared action cache verifies only with the secret that made the job."""
    from dataclasses import replace

    endpoint, worker = pool
    remote = executor(endpoint, buildgrid)
    remote.run(scale_task, None, scale_repo, SETTINGS)
    other = replace(remote, secret=b"another secret", channels={})
    # The same job under another key is another action: run afresh, not read from the cache.
    assert other.run(scale_task, None, scale_repo, SETTINGS).status == "PASSED"
    assert len(worker.actions) == 2


def test_provenance_is_the_pools() -> None:
    pytest.importorskip("buildgrid", reason="the optional `buildgrid` package is not installed")
    from arena.environment.environment import Environment
    from arena.executors.remote import RemoteExecutor

    remote = RemoteExecutor("pool:8980", "MI300X", IMAGE)
    assert remote.describe()["image_digest"] == "sha256:" + "cd" * 32
    environment = remote.environment(Environment(backend="cpu-interpreter", gpu_name="", versions={"torch": "x"}))
    assert (environment.backend, environment.gpu_name) == ("rocm", "MI300X")
    assert environment.versions == {"executor": "remote"} and environment.fingerprint
