"""A task runner shaped like AgentKernelArena's `scripts/task_runner.py`, for the importer's
fixture tasks: its head (the source file, TEST_SHAPES as SHAPES_HERE, load_module) and its foot;
each test writes its reference and run_correctness between them. The importer reads the runner
and never runs it (the head raises if anything does)."""

from __future__ import annotations

import shutil
from pathlib import Path

_HEAD = '''#!/usr/bin/env python3
"""Task runner for triton2triton/NAME: shaped like AgentKernelArena's, written for the tests."""
import importlib.util
import os
import sys

TASK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_FILE = os.path.join(TASK_DIR, "source", "NAME.py")
raise RuntimeError("arena import aka ran the task runner")

TEST_SHAPES = SHAPES_HERE


def load_module():
    spec = importlib.util.spec_from_file_location("kernel", SOURCE_FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


'''

_FOOT = """

if __name__ == "__main__":
    ok, error = run_correctness()
    sys.exit(0 if ok else 1)
"""


def runner_text(name: str, middle: str) -> str:
    """The runner of task `name` (its source file `source/<name>.py`) with `middle` (the reference
    and run_correctness) between its head and its foot."""
    return _HEAD.replace("NAME", name) + middle.strip("\n") + "\n" + _FOOT


def scale_task_copy(checkout: Path, task: str, function: str, kernel: str, runner: str) -> None:
    """The fixture checkout's fake_scale task copied as `task` (`triton2triton/vllm/<name>`): its
    kernel file `source/<name>.py` holding `kernel`, its runner `runner` (whole), its config naming
    `function` where fake_scale's names `scale_rows`."""
    name = task.rsplit("/", 1)[-1]
    folder = checkout / "tasks" / task
    shutil.copytree(checkout / "tasks" / "triton2triton" / "vllm" / "fake_scale", folder)
    (folder / "source" / "fake_scale.py").unlink()
    (folder / "source" / f"{name}.py").write_text(kernel)
    (folder / "scripts" / "task_runner.py").write_text(runner)
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("fake_scale", name).replace("scale_rows", function))
