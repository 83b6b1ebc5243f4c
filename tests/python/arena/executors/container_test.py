"""Real containers: the docker executor running the harness child in the local CPU test image
(bench/build_test_image.sh) through podman, and in the pinned image on this host's GPU where an
engine, a GPU and a resolved lock are all here. Each test skips, with the reason, otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from arena.candidate.candidate import Candidate
from arena.executors.base import ExecutorError
from arena.executors.docker import ENGINE_VARIABLE, DockerExecutor, default_engine, host_vendor
from arena.executors.image import ImageLock
from arena.executors.leftovers import container_name, this_process
from arena.harness.settings import HarnessSettings
from arena.task.task import Task
from arena_testing.processes import ended_process

TEST_IMAGE = "localhost/arena-cpu-test"
TEST_TAG = "bookworm-py311-torch2.13.0-triton3.7.1"  # what bench/build_test_image.sh builds
CPU = HarnessSettings(backend="cpu", timeout_s=240, cases=("small",))
REPO = Path(__file__).resolve().parents[4]


def local_test_image() -> tuple[tuple[str, ...], ImageLock] | str:
    """(engine, the test image locked by its local digest), or why there is none. Podman gives a
    locally imported image a digest; docker gives one only to images pushed to a registry."""
    engine = default_engine() if os.environ.get(ENGINE_VARIABLE) else ("podman",)
    if shutil.which(engine[0]) is None:
        return f"{engine[0]} is not installed (bench/build_test_image.sh installs podman)"
    inspect = [*engine, "image", "inspect", "--format", "{{.Digest}}", f"{TEST_IMAGE}:{TEST_TAG}"]
    done = subprocess.run(inspect, capture_output=True, text=True, check=False)
    digest = done.stdout.strip()
    if done.returncode != 0 or not digest.startswith("sha256:"):
        return f"{engine[0]} holds no {TEST_IMAGE}:{TEST_TAG}: build it with bench/build_test_image.sh"
    return engine, ImageLock(TEST_IMAGE, TEST_TAG, digest, resolved=True, resolved_with="local build")


FOUND = local_test_image()
needs_image = pytest.mark.skipif(isinstance(FOUND, str), reason=str(FOUND))


def local_executor(**options: object) -> DockerExecutor:
    assert not isinstance(FOUND, str)
    engine, lock = FOUND
    limits = dict(memory="4g", scratch="2g", shm_size="1g")
    return DockerExecutor(lock, vendor="cpu", engine=engine, **{**limits, **options})  # type: ignore[arg-type]


def containers(engine: tuple[str, ...]) -> list[str]:
    listed = subprocess.run([*engine, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True)
    return [name for name in listed.stdout.split() if name.startswith("arena-")]


def executor_limits(executor: DockerExecutor) -> list[str]:
    """The executor's --ulimit flags (an engine that raises limits by default needs them here)."""
    argv = executor.command(Path("/nonexistent"), CPU, "probe")
    return [arg for i, arg in enumerate(argv) if arg == "--ulimit" or (i and argv[i - 1] == "--ulimit")]


@needs_image
def test_the_child_runs_inside_the_image_and_its_verdicts_come_back(
    scale_repo: Path, scale_task: Task, wrong_candidate: Candidate
) -> None:
    executor = local_executor()
    good = executor.run(scale_task, None, scale_repo, CPU)
    assert good.status == "PASSED" and good.correct, good.errors
    # The child reports the interpreter it ran under: the image's Debian Python, not this host's.
    inside = subprocess.run(
        [
            *executor.engine,
            "run",
            "--rm",
            "--pull",
            "never",
            *executor_limits(executor),
            executor.image.reference,
            "python3",
            "-c",
            "import platform; print(platform.python_version())",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    versions = good.environment["versions"]
    assert isinstance(versions, dict) and versions["python"] == inside
    bad = executor.run(scale_task, wrong_candidate, scale_repo, CPU)
    assert bad.status == "INCORRECT" and bad.compiled and not bad.correct
    assert not containers(executor.engine)  # --rm: nothing left behind


@needs_image
def test_a_container_past_its_deadline_is_killed_and_removed(scale_repo: Path, scale_task: Task) -> None:
    executor = local_executor(start_grace_s=0.0)
    result = executor.run(scale_task, None, scale_repo, HarnessSettings(backend="cpu", timeout_s=1.0))
    assert result.status == "TIMEOUT"
    assert not containers(executor.engine)


@needs_image
def test_a_dead_runners_container_is_removed_and_a_live_ones_kept() -> None:
    # A runner killed mid-run leaves its container running (the engine's child, not its own).
    here = this_process()
    assert here is not None
    ended, started = ended_process()
    dead, alive = container_name(replace(here, pid=ended, start=started)), container_name(here)
    executor = local_executor()
    for name in (dead, alive):
        start = [*executor.engine, "run", "-d", "--name", name, *executor_limits(executor), "--entrypoint", "sleep"]
        subprocess.run([*start, executor.image.reference, "300"], capture_output=True, check=True)
    try:
        assert {dead, alive} <= set(containers(executor.engine))
        assert executor.sweep() == [dead]
        assert alive in containers(executor.engine) and dead not in containers(executor.engine)
    finally:
        for name in (dead, alive):  # one at a time: podman stops at a name it no longer holds
            subprocess.run([*executor.engine, "rm", "--force", name], capture_output=True, check=False)


def engine_answers() -> bool:
    engine = default_engine()
    if shutil.which(engine[0]) is None:
        return False
    return subprocess.run([*engine, "info"], capture_output=True, check=False).returncode == 0


def pinned_image_reason() -> str:
    """Why the pinned image cannot run here ("" when it can)."""
    if host_vendor() == "cpu":
        return "no GPU here: the pinned images run on a ROCm or CUDA GPU"
    if not engine_answers():
        return f"`{' '.join(default_engine())} info` fails: no container engine answers"
    try:
        DockerExecutor.from_repo(REPO)
    except ExecutorError as error:
        return str(error)
    return ""


PINNED_IMAGE_REASON = pinned_image_reason()


@pytest.mark.skipif(bool(PINNED_IMAGE_REASON), reason=PINNED_IMAGE_REASON or "the pinned image runs here")
def test_the_pinned_image_runs_the_child_on_this_hosts_gpu(scale_repo: Path, scale_task: Task) -> None:
    executor = DockerExecutor.from_repo(REPO)
    result = executor.run(scale_task, None, scale_repo, HarnessSettings(timeout_s=600, check_only=True))
    assert result.status == "PASSED", result.errors
    assert result.environment["backend"] == executor.vendor
