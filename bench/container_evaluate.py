"""One evaluation through the docker executor, end to end: `evaluate()` with the executor as runner.

    PYTHONPATH=src/python python3 bench/container_evaluate.py --task tasks/triton2triton/softmax \
        --image localhost/arena-cpu-test:bookworm-py311-torch2.13.0-triton3.7.1 --vendor cpu

--image NAME:TAG runs a local image (bench/build_test_image.sh), locked by the digest the engine
(ARENA_CONTAINER_ENGINE, default docker) gives it; without --image, the repository's pinned image
for this host's GPU. The candidate is the task's baseline (a no-op); no score cache. On a host
without a GPU (or --vendor cpu) the run checks the small cases on Triton's interpreter, as
`arena evaluate` does there. Prints the executor's provenance and the evaluation as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

from arena.environment.probe import probe_host
from arena.evaluation.evaluate import evaluate, settings_for_machine
from arena.executors.docker import VENDORS, DockerExecutor, default_engine
from arena.executors.image import ImageLock
from arena.harness.settings import HarnessSettings
from arena.task.load import load_task

REPO = Path(__file__).resolve().parents[1]


def local_lock(engine: tuple[str, ...], name: str) -> ImageLock:
    """`name` (repository:tag) locked by the digest the engine holds for it."""
    inspect = [*engine, "image", "inspect", "--format", "{{.Digest}}", name]
    digest = subprocess.run(inspect, capture_output=True, text=True, check=True).stdout.strip()
    repository, _, tag = name.rpartition(":")
    return ImageLock(repository, tag, digest, resolved=True, resolved_with="local build")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, help="task address, e.g. tasks/triton2triton/softmax")
    parser.add_argument("--image", help="a local image, repository:tag (default: the pinned image)")
    parser.add_argument("--vendor", choices=VENDORS, help="whose GPU goes in (default: this host's)")
    parser.add_argument("--memory", default="8g", help="--memory of the container")
    args = parser.parse_args()
    engine = default_engine()
    if args.image:
        lock = local_lock(engine, args.image)
        executor = DockerExecutor(lock, args.vendor or "cpu", memory=args.memory, scratch="4g", engine=engine)
    else:
        executor = DockerExecutor.from_repo(REPO, args.vendor, memory=args.memory, engine=engine)
    task = load_task(REPO, args.task)
    host = probe_host()  # the GPU and driver; the packages are the image's
    backend = "cpu" if executor.vendor == "cpu" else "auto"
    timeout = task.timeout if task.timeout is not None else HarnessSettings.timeout_s
    settings = settings_for_machine(task, HarnessSettings(timeout_s=timeout, backend=backend), host)
    started = time.monotonic()
    evaluation = evaluate(task, None, REPO, settings, runner=executor.run, environment=executor.environment(host))
    seconds = time.monotonic() - started
    print(json.dumps({"executor": executor.describe(), "settings": dataclasses.asdict(settings)}, indent=2))
    print(json.dumps(evaluation.to_dict(), indent=2, default=str))
    print(f"{args.task}: {evaluation.status} in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
