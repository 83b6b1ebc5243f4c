"""The thin client: every command that only talks to a runner (tasks, workspace, leaderboard,
evaluate, suite, reproduce, with --runner or ARENA_RUNNER) run by a Python that cannot import torch
or triton, against `arena serve` in a child process (the real harness, on its CPU lane).

The light Python is this test's own interpreter started with -S, its import path this test's with
every torch and triton folder and distribution left out (the light PEX and the wheel on a machine
without torch hold the same modules), and a meta-path hook that writes down every attempt to find
torch or triton, so not even a guarded import or a find_spec probe passes unnoticed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from arena.cli.main import main  # noqa: F401 (the whole command line, for the children's sandbox)
from arena_testing.add_task import write_add_task
from arena_testing.waiting import WAIT_S

ADD = "tasks/triton2triton/add:add"
OPS_TOKEN = "ops-token"
GPU_LIBRARIES = ("torch", "triton")
# Run by the light Python: the hook, then `arena` with this process's arguments.
BOOT = """
import os, runpy, sys
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "triton"):
            with open(os.environ["ARENA_TEST_SEEN"], "a") as seen:
                seen.write(name + "\\n")
        return None
sys.meta_path.insert(0, Watch())
sys.argv[0] = "arena"
runpy.run_module("arena.cli.main", run_name="__main__", alter_sys=True)
"""


def is_gpu_library(name: str) -> bool:
    """torch/, triton/, torch-2.13.0+cpu.dist-info, triton-3.5.0.dist-info, ..."""
    return re.split(r"[-_.+]", name, maxsplit=1)[0].lower() in GPU_LIBRARIES


def light_path(folder: Path) -> list[str]:
    """This test's import path, absolute (the commands run in other folders), with torch and triton
    left out: a folder that holds either is replaced by a mirror of links to everything else in it."""
    path: list[str] = []
    for index, entry in enumerate(os.path.abspath(p) for p in sys.path if p):
        if not os.path.isdir(entry):
            continue
        names = os.listdir(entry)
        if not any(is_gpu_library(name) for name in names):
            path.append(entry)
            continue
        mirror = folder / str(index)
        mirror.mkdir(parents=True)
        for name in names:
            if not is_gpu_library(name):
                (mirror / name).symlink_to(Path(entry, name))
        path.append(str(mirror))
    return path


class Light:
    """`arena ...` in the light Python; each call's attempts to find torch or triton in .seen."""

    def __init__(self, tmp_path: Path, address: str) -> None:
        self._tmp = tmp_path
        self.address = address
        self._path = os.pathsep.join(light_path(tmp_path / "light-path"))
        self._calls = 0
        self.seen: list[str] = []

    def __call__(self, *argv: str, cwd: Path, runner: bool = True) -> subprocess.CompletedProcess[str]:
        self._calls += 1
        seen = self._tmp / f"seen-{self._calls}.txt"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "ARENA_"))}
        env.update(PYTHONPATH=self._path, PYTHONNOUSERSITE="1", ARENA_TEST_SEEN=str(seen))
        if runner:
            env.update(ARENA_RUNNER=self.address, ARENA_TOKEN=OPS_TOKEN)
        done = subprocess.run(
            [sys.executable, "-S", "-c", BOOT, *argv],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=WAIT_S * 5, check=False,
        )  # fmt: skip
        self.seen = seen.read_text().split() if seen.exists() else []
        return done


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """`arena serve` on 127.0.0.1 in a child process (this test's Python, torch and all): its address."""
    repo = write_add_task(tmp_path / "served-repo")
    command = [sys.executable, "-m", "arena.cli.main", "--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0"]
    command += ["--state", str(tmp_path / "state"), "--devices", "cpu"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)}
    env["ARENA_TOKENS"] = f"ops:{OPS_TOKEN}:operator,alice:alice-token"
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("arena runner on 127.0.0.1:"), child.stderr.read()  # type: ignore[union-attr]
        yield line.split()[3].rstrip(":")
    finally:
        child.terminate()
        try:
            child.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=WAIT_S)


def test_the_light_command_line_drives_a_runner_without_torch(served: str, tmp_path: Path) -> None:
    light = Light(tmp_path, served)
    repo = write_add_task(tmp_path / "repo")  # the client's checkout, for evaluate and suite
    elsewhere = tmp_path / "elsewhere"  # no checkout: the runner holds the tasks
    elsewhere.mkdir()

    # Without a runner the light Python is no measurement environment: torch and triton are missing.
    local = light("--repo-root", str(repo), "evaluate", "--task", ADD, cwd=repo, runner=False)
    assert local.returncode == 10 and "cannot import torch, triton" in local.stderr, local.stderr
    assert light.seen, "the hook saw the measurement probe look for torch"

    def ok(*argv: str, cwd: Path = elsewhere) -> str:
        done = light(*argv, cwd=cwd)
        assert done.returncode == 0, f"arena {' '.join(argv)}: {done.returncode}\n{done.stderr}"
        assert light.seen == [], f"arena {' '.join(argv)} looked for {light.seen}"
        return done.stdout

    assert [row["address"] for row in json.loads(ok("tasks", "--json", "-"))] == [ADD]
    ok("workspace", ADD, str(tmp_path / "ws"))
    assert (tmp_path / "ws" / "TASK.md").is_file() and (tmp_path / "ws" / "candidate" / "kernel.py").is_file()
    assert json.loads(ok("leaderboard", "--json", "-")) == []

    # --runner as a flag; the runner measures, with its own settings and score cache.
    ok("--repo-root", str(repo), "evaluate", "--task", ADD, "--runner", served, "--token", OPS_TOKEN,
       "--json", str(tmp_path / "e.json"), cwd=repo)  # fmt: skip
    evaluation = json.loads((tmp_path / "e.json").read_text())
    assert (evaluation["task"], evaluation["status"]) == (ADD, "PASSED")
    ok("suite", "--category", "triton2triton", "--json", str(tmp_path / "s.json"), cwd=repo)
    suite = json.loads((tmp_path / "s.json").read_text())
    assert [e["status"] for e in suite["evaluations"]] == ["PASSED"] and suite["failed"] == []

    # The runner runs its own evaluation again, past its cache; only the comparison is made here.
    ok("reproduce", evaluation["id"], "--json", str(tmp_path / "r.json"))
    reproduction = json.loads((tmp_path / "r.json").read_text())
    assert reproduction["agrees"] and reproduction["evaluation"] == evaluation["id"]
    assert reproduction["rerun"] not in (evaluation["id"], "")
